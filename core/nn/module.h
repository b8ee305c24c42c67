#pragma once
// The module system: a tree of named modules holding named parameters and
// buffers, as torch.nn.Module. Calling a module through operator() runs its
// forward inside a ModuleScope, so whoever records ops (the compiler's
// capture, the profiler) knows which module an op came from.

#include "core/tensor/tensor.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fusescope::nn {

using NamedTensor = std::pair<std::string, Tensor>;

class Module
{
public:
    explicit Module(std::string typeName);
    virtual ~Module();
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;

    // The class name as PyTorch prints it ("Linear", "BasicBlock").
    const std::string &typeName() const { return m_typeName; }
    // The name under which the parent registered this module ("conv1", "0"); empty for a root.
    const std::string &name() const { return m_name; }
    const Module *parent() const { return m_parent; }
    // Dotted path from the root ("layer1.0.conv1"); empty for a root.
    std::string modulePath() const;

    // Runs forward inside this module's scope. The list form is how the
    // compiler calls any model generically.
    Tensor operator()(const Tensor &x);
    Tensor operator()(const std::vector<Tensor> &inputs);

    // Override the single-input form for ordinary layers and the list form for
    // modules with several inputs; each default forwards to the other.
    virtual Tensor forward(const std::vector<Tensor> &inputs);
    virtual Tensor forward(const Tensor &x);

    // Own entries only, in registration order.
    const std::vector<NamedTensor> &ownParameters() const { return m_parameters; }
    const std::vector<NamedTensor> &ownBuffers() const { return m_buffers; }
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>> &children() const { return m_children; }

    // Recursive, with dotted names relative to this module, in PyTorch's order
    // (own entries first, then each child's in registration order).
    std::vector<NamedTensor> namedParameters() const;
    std::vector<NamedTensor> namedBuffers() const;
    // Parameters then persistent buffers per module, as PyTorch's state_dict.
    std::vector<NamedTensor> stateDict() const;
    // This module (name "") and every descendant, pre-order.
    std::vector<std::pair<std::string, const Module *>> namedModules() const;
    int64_t numParameters() const;

    const Tensor &parameter(const std::string &name) const;
    std::optional<Tensor> optionalParameter(const std::string &name) const;
    const Tensor &buffer(const std::string &name) const;
    // Replaces a tensor by one of the same shape (loading weights). A dotted
    // name reaches into children ("layer1.0.bn1.running_mean").
    void setTensor(const std::string &dottedName, const Tensor &value);
    Module &child(const std::string &name) const;

    // Converts floating parameters and buffers (weights of another precision).
    void to(DType dtype);

    // Training flag, recursive. Modules here only change behaviour through it
    // where PyTorch's inference maths differ (BatchNorm2d).
    void train(bool on = true);
    void eval() { train(false); }
    bool isTraining() const { return m_training; }

    // PyTorch-like printout of the module tree.
    std::string repr() const;
    virtual std::string extraRepr() const { return {}; }

protected:
    void registerParameter(const std::string &name, Tensor value);
    void registerBuffer(const std::string &name, Tensor value, bool persistent = true);
    template <typename M>
    std::shared_ptr<M> registerModule(const std::string &name, std::shared_ptr<M> module)
    {
        attachChild(name, module);
        return module;
    }

private:
    void attachChild(const std::string &name, std::shared_ptr<Module> module);
    void checkNewName(const std::string &name) const;
    Tensor *findOwn(const std::string &name);
    void collect(const std::string &prefix, bool params, bool buffers, bool persistentOnly,
                 std::vector<NamedTensor> &out) const;
    void reprInto(std::string &out, int indent) const;

    std::string m_typeName;
    std::string m_name;
    Module *m_parent = nullptr;
    bool m_training = true;
    std::vector<NamedTensor> m_parameters;
    std::vector<NamedTensor> m_buffers;
    std::vector<std::string> m_nonPersistent;
    std::vector<std::pair<std::string, std::shared_ptr<Module>>> m_children;
};

// --- the module stack of the running forward ---------------------------------

struct ModuleFrame {
    std::string path;      // "layer1.0.conv1"; "" for the root
    std::string typeName;  // "Conv2d"
    const Module *module = nullptr;
};

// Pushes a frame on this thread's module stack for its lifetime.
class ModuleScope
{
public:
    explicit ModuleScope(const Module &module);
    explicit ModuleScope(std::string path, std::string typeName = {});
    ~ModuleScope();
    ModuleScope(const ModuleScope &) = delete;
    ModuleScope &operator=(const ModuleScope &) = delete;
};

// The innermost running module's path; "" outside any module or in a root.
const std::string &currentModulePath();
// Outermost first (torch's nn_module_stack); empty outside any module.
const std::vector<ModuleFrame> &moduleStack();

} // namespace fusescope::nn

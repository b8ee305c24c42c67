#pragma once
// The versioned JSON form of a graph: what the trace store keeps for every
// compile stage and what the views draw. toJson(fromJson(j)) == j exactly.

#include "core/compiler/graph.h"

#include <nlohmann/json_fwd.hpp>

namespace fusescope::compiler {

inline constexpr const char *kGraphJsonFormat = "fusescope.graph";
inline constexpr int kGraphJsonVersion = 1;

nlohmann::json graphToJson(const Graph &graph);
// Attributes come back as meta tensors of the recorded shape and dtype.
// Throws Error naming the offending node or field.
Graph graphFromJson(const nlohmann::json &json);

std::string graphToJsonText(const Graph &graph, int indent = -1);
Graph graphFromJsonText(const std::string &text);

nlohmann::json valueToJson(const Value &v);
Value valueFromJson(const nlohmann::json &j);

} // namespace fusescope::compiler

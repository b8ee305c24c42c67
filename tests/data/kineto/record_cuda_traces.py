# Records PyTorch profiler (Kineto) traces of CUDA work into OUT_DIR, as users'
# tensorboard_trace_handler runs write them; tests/data/kineto's fixture came from it.
# Run on a machine with an NVIDIA GPU and PyTorch: python3 record_cuda_traces.py OUT_DIR [BIG_STEPS]
# With BIG_STEPS it also records cuda_train_big.pt.trace.json.gz, that many training steps (500: 214 MB of JSON),
# for build/tests/bench/bench_import 3 cuda_train_big.pt.trace.json.gz.
# (h200_pytorch2.11_train.pt.trace.json.gz is cuda_train_gz from PyTorch 2.11 on an H200, 2026-12-04.)
import os, sys, time, glob, shutil
import torch, torch.nn as nn
out = sys.argv[1]
dev = "cuda"
print("torch", torch.__version__, torch.cuda.get_device_name(0), flush=True)

class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.enc = nn.TransformerEncoderLayer(256, 4, 1024, activation="gelu", batch_first=True)
        s.mlp = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))
    def forward(s, x):
        return s.mlp(s.enc(x)).sum()

def run(name, model, steps, gzip, train):
    x = torch.randn(8, 128, 256, device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3) if train else None
    d = os.path.join(out, name)
    sched = torch.profiler.schedule(wait=1, warmup=1, active=steps, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                schedule=sched, record_shapes=True, profile_memory=True,
                                on_trace_ready=torch.profiler.tensorboard_trace_handler(d, worker_name=name, use_gzip=gzip)) as p:
        for _ in range(steps + 2):
            with torch.profiler.record_function("step"):
                y = model(x)
                if train:
                    y.backward(); opt.step(); opt.zero_grad()
            torch.cuda.synchronize()
            p.step()
    for f in glob.glob(os.path.join(d, "*")):
        shutil.move(f, os.path.join(out, name + (".pt.trace.json.gz" if gzip else ".pt.trace.json")))
    os.rmdir(d)

t = time.time()
m = Block().to(dev)
if len(sys.argv) > 2:
    run("cuda_train_big", m, int(sys.argv[2]), True, True)
run("cuda_train", m, 3, False, True)
run("cuda_train_gz", m, 3, True, True)
print("eager traces", time.time() - t, flush=True)
t = time.time()
c = torch.compile(Block().to(dev).eval())
with torch.no_grad():
    x = torch.randn(8, 128, 256, device=dev)
    for _ in range(3): c(x)
    torch.cuda.synchronize()
    run("cuda_compiled", c, 4, False, False)
print("compiled trace", time.time() - t, flush=True)
for f in sorted(os.listdir(out)):
    print(f, os.path.getsize(os.path.join(out, f)))

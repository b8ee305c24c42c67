# Records two ranks of a data-parallel training step (gloo, both on one GPU), each traced by
# tensorboard_trace_handler: python3 record_ddp_traces.py OUT_DIR. tests/data/kineto's
# h200_pytorch2.11_ddp_rank{0,1} came from it (PyTorch 2.11 on an H200, 2026-12-04).
import os, sys, glob, shutil
import torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp

def worker(rank, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=2)
    dev = "cuda"
    m = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).to(dev)
    ddp = nn.parallel.DistributedDataParallel(m)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(64, 256, device=dev)
    d = os.path.join(out, f"r{rank}")
    sched = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                schedule=sched, record_shapes=True,
                                on_trace_ready=torch.profiler.tensorboard_trace_handler(d, worker_name=f"worker{rank}", use_gzip=True)) as p:
        for _ in range(5):
            ddp(x).sum().backward(); opt.step(); opt.zero_grad(); torch.cuda.synchronize(); p.step()
    for f in glob.glob(os.path.join(d, "*")):
        shutil.move(f, os.path.join(out, f"ddp_worker{rank}.pt.trace.json.gz"))
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1],), nprocs=2)
    for f in sorted(os.listdir(sys.argv[1])):
        print(f, os.path.getsize(os.path.join(sys.argv[1], f)))

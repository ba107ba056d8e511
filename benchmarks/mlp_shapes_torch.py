# The MLP step of `strata-bench-values --shapes 40` in PyTorch eager (one
# thread): a new batch size 16..55 each step, then the same sizes again.
import torch, time, statistics
torch.set_num_threads(1)
torch.manual_seed(1)
w1=((torch.rand(64,128)-0.5)*0.2).requires_grad_()
w2=((torch.rand(128,10)-0.5)*0.2).requires_grad_()
for p in range(2):
    ms=[]
    for b in range(16,56):
        x=torch.rand(b,64)
        t=time.perf_counter()
        loss=x.matmul(w1).relu().matmul(w2).relu().sum()
        loss.backward(); l=loss.item()
        w1.grad.zero_(); w2.grad.zero_()
        ms.append((time.perf_counter()-t)*1e3)
    print(p, "median ms", statistics.median(ms))

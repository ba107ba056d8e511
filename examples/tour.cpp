// The seed tour (SEED-TOUR.md points 1-10) as a strata C++ program.
#include <strata/strata.h>

#include <cstdio>
#include <iostream>
#include <vector>

using namespace strata;

namespace {
void banner(const char *title) { std::printf("\n=== %s ===\n", title); }
std::string list(const Shape &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}
const char *yes(bool b) { return b ? "True" : "False"; }
double mib(int64_t b) { return b / 1048576.0; }
} // namespace

int main(int argc, char **argv) {
  banner("1. Storage: t() and view(-1) share it, clone() gets a new one");
  Tensor a = arange(12, kFloat32).reshape({3, 4});
  std::cout << "a = " << a << "\n";
  bool sameT = a.t().storage().data_ptr() == a.storage().data_ptr();
  bool sameV = a.view({-1}).storage().data_ptr() == a.storage().data_ptr();
  bool sameC = a.clone().storage().data_ptr() == a.storage().data_ptr();
  std::printf("a.t() shares storage: %s; a.view(-1): %s; a.clone(): %s\n",
              yes(sameT), yes(sameV), yes(sameC));

  banner("2. Data pointer = storage + offset x element size");
  Tensor x = arange(10, kInt32);
  Tensor s = x.slice(0, 2, 5);
  std::printf("x[2:5] data_ptr - x data_ptr = %td bytes; values %s\n",
              static_cast<char *>(s.data_ptr()) -
                  static_cast<char *>(x.data_ptr()),
              s.toString().c_str());
  Tensor w = x.as_strided({3}, {1}, 2);
  std::cout << "x.as_strided((3,), (1,), 2) = " << w << "\n";
  try {
    x.as_strided({3}, {1}, 9);
  } catch (const Error &e) {
    std::printf("as_strided past the storage: strata::Error: %s\n",
                e.message().c_str());
  }

  banner("3. A storage knows its element count and size, not a shape");
  Storage st = a.storage();
  std::printf("a.storage(): size() %lld elements, element_size %lld, nbytes "
              "%lld\n",
              (long long)st.size(), (long long)st.element_size(),
              (long long)st.nbytes());

  banner("4. Sizes and strides");
  Tensor tt = a.t();
  std::printf("a: sizes %s strides %s; a.t(): sizes %s strides %s\n",
              list(a.sizes()).c_str(), list(a.strides()).c_str(),
              list(tt.sizes()).c_str(), list(tt.strides()).c_str());
  std::printf("a.t()[1][2] = %g = storage[%lld]\n", tt[1][2].item<double>(),
              (long long)tt[1][2].storage_offset());

  banner("5. view after t() fails; reshape and contiguous work");
  try {
    tt.view({12});
  } catch (const Error &e) {
    std::printf("a.t().view(12): strata::Error:\n%s\n", e.what());
  }
  std::cout << "a.t().reshape(12) = " << tt.reshape({12}) << "\n";
  Tensor c = tt.contiguous();
  std::printf(
      "a.t().contiguous(): strides %s (a copy); a.contiguous() is a "
      "itself: %s\n",
      list(c.strides()).c_str(),
      yes(a.contiguous().storage().data_ptr() == a.storage().data_ptr()));
  std::cout << "a.t().contiguous().view(12) = " << c.view({12}) << "\n";

  banner("6. Broadcasting (3,1) + (1,4): stride 0, no expanded copy");
  Tensor col = arange(3, kFloat32).view({3, 1});
  Tensor row = arange(4, kFloat32).view({1, 4});
  std::printf("col.expand(3,4) strides %s\n",
              list(col.expand({3, 4}).strides()).c_str());
  eval({col, row});
  auto before = memory_stats();
  Tensor sum = col + row;
  sum.eval();
  auto after = memory_stats();
  std::cout << "col + row = " << sum << "\n";
  std::printf("allocated by col + row: %lld bytes (the 3x4 result only: "
              "new storage, %s)\n",
              (long long)(after.allocated_bytes - before.allocated_bytes),
              sum.storage().data_ptr() == col.storage().data_ptr()
                  ? "shared?!"
                  : "not shared with the inputs");

  banner("7. Memory stats: empty adds 4 MiB, view 0, clone 4 MiB");
  {
    Tensor warm = empty({1024, 1024});
    warm.clone().eval();
  }
  auto m0 = memory_stats();
  Tensor big = empty({1024, 1024});
  auto m1 = memory_stats();
  Tensor bigView = big.view({1024 * 1024});
  auto m2 = memory_stats();
  Tensor bigClone = big.clone();
  bigClone.eval();
  auto m3 = memory_stats();
  std::printf("empty(1024,1024): +%.2f MiB; view: +%.2f MiB; clone: +%.2f "
              "MiB (reserved %.2f MiB, peak %.2f MiB)\n",
              mib(m1.allocated_bytes - m0.allocated_bytes),
              mib(m2.allocated_bytes - m1.allocated_bytes),
              mib(m3.allocated_bytes - m2.allocated_bytes),
              mib(m3.reserved_bytes), mib(m3.peak_allocated_bytes));

  banner("8. Storage lives until the last view dies");
  {
    auto s0 = memory_stats();
    Tensor base = empty({1 << 20});
    std::vector<Tensor> views;
    for (int i = 0; i < 1000; ++i)
      views.push_back(base.slice(0, i, i + 10));
    base = Tensor();
    auto s1 = memory_stats();
    std::printf("base dropped, 1000 views alive: +%.2f MiB still allocated\n",
                mib(s1.allocated_bytes - s0.allocated_bytes));
    views.clear();
    auto s2 = memory_stats();
    std::printf("views dropped: +%.2f MiB (freed)\n",
                mib(s2.allocated_bytes - s0.allocated_bytes));
  }

  banner("9. Zero-copy random crop with narrow");
  {
    manual_seed(0);
    Tensor img = rand({3, 64, 64});
    auto c0 = memory_stats();
    Tensor crop = img.narrow(1, 10, 32).narrow(2, 20, 32);
    auto c1 = memory_stats();
    std::printf("crop sizes %s strides %s offset %lld; allocated %lld "
                "bytes; shares storage: %s\n",
                list(crop.sizes()).c_str(), list(crop.strides()).c_str(),
                (long long)crop.storage_offset(),
                (long long)(c1.allocated_bytes - c0.allocated_bytes),
                yes(crop.storage().data_ptr() == img.storage().data_ptr()));
  }

  banner("10. Channel shuffle: one fused kernel, one output allocation");
  {
    int64_t n = 2, g = 4, ch = 16, h = 32, wd = 32;
    Tensor in = rand({n, ch, h, wd});
    reset_eval_stats();
    auto k0 = memory_stats();
    Tensor out = in.view({n, g, ch / g, h, wd})
                     .transpose(1, 2)
                     .contiguous()
                     .view({n, ch, h, wd});
    out.eval();
    auto k1 = memory_stats();
    auto ev = eval_stats();
    std::printf("allocations: %lld (%lld bytes = one %lldx%lldx%lldx%lld "
                "f32 output); kernels: %lld; programs: %lld\n",
                (long long)(k1.num_allocs - k0.num_allocs),
                (long long)(k1.allocated_bytes - k0.allocated_bytes),
                (long long)n, (long long)ch, (long long)h, (long long)wd,
                (long long)ev.kernels, (long long)ev.programs);
    std::printf(
        "out[0][1][0][0] == in[0][4][0][0]: %s\n",
        yes(out[0][1][0][0].item<float>() == in[0][4][0][0].item<float>()));
    std::cout << out.explain();
  }

  banner("13. detach() shares storage");
  Tensor p = ones({2}, dtype(kFloat32).requires_grad(true));
  Tensor d = p.detach();
  std::printf("p.requires_grad %s, d.requires_grad %s, same storage %s\n",
              yes(p.requires_grad()), yes(d.requires_grad()),
              yes(d.storage().data_ptr() == p.storage().data_ptr()));

  banner("In-place through a view; the IR that ran");
  Tensor m = zeros({3, 4});
  Tensor mc = m.select(1, 1);
  mc.add_(7);
  std::cout << "m after m[:, 1] += 7:\n"
            << m << "\nversion " << m._version() << "\n";
  Tensor e = ones({4}).expand({3, 4});
  try {
    e.add_(1);
  } catch (const Error &err) {
    std::printf("expand(...).add_(1): %s\n", err.message().c_str());
  }
  Tensor y = (a * 2 + 1).relu().sum({1});
  IRDump ir = dump_ir({y});
  std::cout << "dump_ir((a * 2 + 1).relu().sum(1)) before the pipeline:\n"
            << ir.before;
  std::cout << "y = " << y << "\n" << y.explain();

  // The picture of a program (make demo renders it to SVG with Graphviz).
  if (argc > 1) {
    banner("Pictures: the recorded trace as Graphviz DOT");
    Tensor z = (a.t() * 2).exp().sum({0}) + a.select(1, 0).flip({0});
    std::string path = std::string(argv[1]) + "/trace.dot";
    save_dot({z}, path);
    std::printf("wrote %s (render: dot -Tsvg %s -o trace.svg)\n", path.c_str(),
                path.c_str());
  }
  banner("Autograd (11-17): backward() differentiates the recorded IR");
  {
    Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
    std::printf("11. leaf: is_leaf %d, grad_fn %s, grad defined %d\n",
                x.is_leaf(), x.grad_fn() ? "set" : "null", x.grad().defined());
    Tensor y = x * 2;
    y.sum().backward();
    std::cout << "    y = x*2: grad_fn " << y.grad_fn()->name()
              << "; after y.sum().backward(): x.grad() = " << x.grad()
              << ", y.grad() defined " << y.grad().defined() << "\n";
    Tensor w = tensor({2.0f}).requires_grad_();
    Tensor sq = w * w;
    sq.backward({}, /*retain_graph=*/true);
    sq.backward({}, true);
    std::cout << "12. two backward(retain_graph) of w*w: w.grad() = "
              << w.grad();
    w.mutable_grad().zero_();
    std::cout << ", after zero_(): " << w.grad() << "\n";
    sq.backward();
    try {
      sq.backward();
    } catch (const Error &err) {
      std::printf("    third backward: %.60s...\n", err.message().c_str());
    }
    Tensor d = x.detach();
    std::printf("13. detach: shares storage %d, grad_fn %s, requires_grad %d\n",
                d.storage().is_alias_of(x.storage()),
                d.grad_fn() ? "set" : "null", d.requires_grad());
    try {
      x.add_(1);
    } catch (const Error &err) {
      std::printf("14. x.add_(1) on a leaf: %s\n", err.message().c_str());
    }
    Tensor a1 = x * 1, b1 = a1 * a1;
    a1.add_(1);
    try {
      b1.sum().backward();
    } catch (const Error &err) {
      std::printf("    a = x*1; b = a*a; a.add_(1): %s\n    hint: %s\n",
                  err.message().c_str(), err.hint().c_str());
    }
    try {
      (x * 2).backward();
    } catch (const Error &err) {
      std::printf("15. non-scalar backward(): %s\n", err.message().c_str());
    }
    Tensor z = (x * 2).mean() + (x * 3).sum();
    std::cout << "16. the graph of (x*2).mean() + (x*3).sum():\n"
              << format_graph(z);
    auto f = [](const std::vector<Tensor> &v) { return (v[0] * v[0]).tanh(); };
    GradcheckResult ok = gradcheck(f, {tensor({0.3, -0.8})});
    GradcheckOptions wrong;
    wrong.analytic = [](const std::vector<Tensor> &v, const Tensor &g) {
      return std::vector<Tensor>{g * v[0] * 3.0};
    };
    GradcheckResult bad =
        gradcheck([](const std::vector<Tensor> &v) { return v[0] * v[0]; },
                  {tensor({1.0, -2.0})}, wrong);
    std::printf("17. %s\n    wrong backward (3x for x*x): %s\n",
                ok.message.c_str(), bad.message.c_str());
    if (argc > 1) {
      std::string path = std::string(argv[1]) + "/autograd.dot";
      save_dot({z}, path, GraphKind::Autograd);
      std::printf("    wrote %s\n", path.c_str());
    }
  }
  return 0;
}

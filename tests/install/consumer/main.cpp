// A first strata program, built against the installed package.
#include <strata/strata.h>

#include <cstdio>
#include <cstring>

int main() {
  using namespace strata;
  if (std::strcmp(version(), STRATA_VERSION_STRING) != 0) {
    std::printf("version mismatch: library %s, header %s\n", version(),
                STRATA_VERSION_STRING);
    return 1;
  }
  Tensor a = arange(12, kFloat32).reshape({3, 4});
  Tensor b = (a.t() * 2 + 1).sum({1});
  std::printf("strata %s: %s\n", version(), b.toString().c_str());
  // 2 * (0+4+8) + 3 = 27, 33, 39, 45.
  std::vector<float> got = b.to_vector<float>();
  std::vector<float> want = {27, 33, 39, 45};
  return got == want ? 0 : 1;
}

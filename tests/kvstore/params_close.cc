// Compares two .params files array by array for the distributed-training
// tests: same names and shapes, and every element within an absolute
// tolerance (runs that sum gradients in a different order agree only to
// float rounding). Prints the largest difference; exit 0 when close, 1 not.
// With a third file, A's auxiliary states ("aux:" arrays) are compared with
// the mean of B's and C's (BatchNorm statistics averaged over two workers).
//
//   params_close A.params B.params TOLERANCE [C.params]
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ndarray/params_io.h"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: params_close A.params B.params TOLERANCE [C.params]\n";
    return 2;
  }
  const mx::NamedArrays a = mx::load_params(argv[1]);
  const mx::NamedArrays b = mx::load_params(argv[2]);
  const double tolerance = std::atof(argv[3]);
  const bool mean = argc == 5;
  const mx::NamedArrays c = mean ? mx::load_params(argv[4]) : b;
  if (a.names != b.names || a.arrays.size() != b.arrays.size() || b.names != c.names) {
    std::cout << "params_close: the files hold different arrays\n";
    return 1;
  }
  double worst = 0;
  std::string where;
  int compared = 0;
  for (size_t i = 0; i < a.arrays.size(); ++i) {
    if (mean && a.names[i].rfind("aux:", 0) != 0) continue;
    ++compared;
    if (a.arrays[i].shape() != b.arrays[i].shape()) {
      std::cout << "params_close: " << a.names[i] << " has different shapes\n";
      return 1;
    }
    const auto x = a.arrays[i].to_vector<float>();
    const auto y = b.arrays[i].to_vector<float>();
    const auto z = c.arrays[i].to_vector<float>();
    for (size_t k = 0; k < x.size(); ++k) {
      const double expected = mean ? (static_cast<double>(y[k]) + z[k]) / 2 : y[k];
      const double d = std::fabs(static_cast<double>(x[k]) - expected);
      if (!(d <= worst)) {
        worst = d;
        where = a.names[i] + "[" + std::to_string(k) + "]";
      }
    }
  }
  if (compared == 0) {
    std::cout << "params_close: nothing to compare\n";
    return 1;
  }
  const bool close = worst <= tolerance;
  std::cout << "params_close: largest difference " << worst << " at " << where << " ("
            << (close ? "within" : "above") << " tolerance " << tolerance << ")\n";
  return close ? 0 : 1;
}

// Compares two .params files array by array for the distributed-training
// tests: same names and shapes, and every element within an absolute
// tolerance (runs that sum gradients in a different order agree only to
// float rounding). Prints the largest difference; exit 0 when close, 1 not.
//
//   params_close A.params B.params TOLERANCE
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ndarray/params_io.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: params_close A.params B.params TOLERANCE\n";
    return 2;
  }
  const mx::NamedArrays a = mx::load_params(argv[1]);
  const mx::NamedArrays b = mx::load_params(argv[2]);
  const double tolerance = std::atof(argv[3]);
  if (a.names != b.names || a.arrays.size() != b.arrays.size()) {
    std::cout << "params_close: the files hold different arrays\n";
    return 1;
  }
  double worst = 0;
  std::string where;
  for (size_t i = 0; i < a.arrays.size(); ++i) {
    if (a.arrays[i].shape() != b.arrays[i].shape()) {
      std::cout << "params_close: " << a.names[i] << " has different shapes\n";
      return 1;
    }
    const auto x = a.arrays[i].to_vector<float>();
    const auto y = b.arrays[i].to_vector<float>();
    for (size_t k = 0; k < x.size(); ++k) {
      const double d = std::fabs(static_cast<double>(x[k]) - y[k]);
      if (!(d <= worst)) {
        worst = d;
        where = a.names[i] + "[" + std::to_string(k) + "]";
      }
    }
  }
  const bool close = worst <= tolerance;
  std::cout << "params_close: largest difference " << worst << " at " << where << " ("
            << (close ? "within" : "above") << " tolerance " << tolerance << ")\n";
  return close ? 0 : 1;
}

// mx-params: lists the arrays of .params files (mx's or MXNet 1.x's):
// name, dtype, shape and summary statistics, as a table or JSON.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "base/json_escape.h"
#include "base/strings.h"
#include "ndarray/params_io.h"
#include "program.h"

namespace {

struct Summary {
  double min = 0, max = 0, mean = 0, l2 = 0;
  int64_t non_finite = 0;
};

Summary summarize(const mx::NDArray& a) {
  Summary s;
  if (a.is_none() || a.size() == 0) return s;
  std::vector<double> v;
  mx::dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const T& x : a.to_vector<T>()) v.push_back(static_cast<double>(static_cast<float>(x)));
  });
  s.min = s.max = v[0];
  double sum = 0, sq = 0;
  for (double x : v) {
    if (!std::isfinite(x)) {
      ++s.non_finite;
      continue;
    }
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    sum += x;
    sq += x * x;
  }
  s.mean = sum / static_cast<double>(v.size());
  s.l2 = std::sqrt(sq);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"List the arrays stored in MXNet .params files", "mx-params"};
  std::vector<std::string> files;
  bool json = false;
  app.add_option("files", files, ".params files to list")->required()->check(CLI::ExistingFile);
  app.add_flag("--json", json, "print one JSON object per file instead of a table");

  return mx::run_program(app, argc, argv, [&] {
    for (const auto& file : files) {
      mx::NamedArrays list = mx::load_params(file);
      int64_t total = 0;
      if (json)
        std::cout << "{\"file\": \"" << mx::json_escape(file) << "\", \"arrays\": [";
      else
        std::cout << file << ": " << list.arrays.size() << " array(s)\n";
      for (size_t i = 0; i < list.arrays.size(); ++i) {
        const auto& a = list.arrays[i];
        std::string name = list.names.empty() ? std::to_string(i) : list.names[i];
        Summary s = summarize(a);
        total += a.size();
        char stats[160];
        std::snprintf(stats, sizeof stats, "min %.6g max %.6g mean %.6g l2 %.6g", s.min, s.max,
                      s.mean, s.l2);
        if (json) {
          std::cout << (i ? ", " : "") << "{\"name\": \"" << mx::json_escape(name)
                    << "\", \"dtype\": \"" << (a.is_none() ? "none" : mx::dtype_name(a.dtype()))
                    << "\", \"shape\": ["
                    << mx::join(
                           [&] {
                             std::vector<std::string> d;
                             for (int64_t x : a.shape()) d.push_back(std::to_string(x));
                             return d;
                           }(),
                           ", ")
                    << "], \"size\": " << a.size() << ", \"min\": " << s.min
                    << ", \"max\": " << s.max << ", \"mean\": " << s.mean << ", \"l2\": " << s.l2
                    << ", \"non_finite\": " << s.non_finite << "}";
        } else {
          std::printf("  %-32s %-8s %-18s %s%s\n", name.c_str(),
                      a.is_none() ? "none" : mx::dtype_name(a.dtype()),
                      a.is_none() ? "-" : a.shape().to_string().c_str(), stats,
                      s.non_finite ? (" non-finite " + std::to_string(s.non_finite)).c_str() : "");
        }
      }
      if (json)
        std::cout << "], \"total_elements\": " << total << "}\n";
      else
        std::cout << "  total elements: " << total << "\n";
    }
  });
}

// mx-ops's listing: per operator, the devices with kernels and the CPU
// implementations, in text, Markdown and JSON (docs/operators.md).
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "op/dnnl/dnnl_switch.h"
#include "op/listing.h"
#include "op/registry.h"

using namespace mx;
using namespace mx::op;

namespace {

std::string listing(ListingFormat format, const std::string& name = "") {
  std::ostringstream out;
  print_operators(out, format, name);
  return out.str();
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the listing names each operator's devices and CPU implementations") {
  const bool gpu = OpRegistry::get().find("relu").has_kernel(DeviceKind::kGPU);
  const std::string relu = gpu ? "cpu (reference), gpu" : "cpu (reference)";
  CHECK(has(listing(ListingFormat::kText, "relu"), "  kernels: " + relu + "\n"));
  CHECK(has(listing(ListingFormat::kMarkdown, "relu"), "Kernels: " + relu + ".\n"));
  CHECK(has(listing(ListingFormat::kText, "relu"), "  mixed precision: follow\n"));
  CHECK(has(listing(ListingFormat::kJson, "Convolution"), "\"amp\": \"low_precision\""));
  CHECK(has(listing(ListingFormat::kJson, "relu"),
            std::string("\"devices\": [\"cpu\"") + (gpu ? ", \"gpu\"]" : "]") +
                ", \"cpu_implementations\": [\"reference\"]"));

  // oneDNN where it is built in, for the operators that call it.
  const std::string conv = listing(ListingFormat::kJson, "Convolution");
  CHECK(has(conv, "\"cpu_implementations\": [\"reference\", \"oneDNN\"]") == dnnl_built());
  CHECK(has(conv, "\"cpu_implementations\": [\"reference\"]") == !dnnl_built());
  CHECK(
      has(listing(ListingFormat::kJson, "Activation"), "\"cpu_implementations\": [\"reference\"]"));

  // The Markdown file's table: one row per operator.
  const std::string md = listing(ListingFormat::kMarkdown);
  CHECK(has(md, "| operator | CPU | GPU |"));
  CHECK(has(md, std::string("| relu | reference | ") + (gpu ? "yes" : "—") + " |\n"));
  CHECK(has(md, std::string("| Pooling | reference") + (dnnl_built() ? ", oneDNN" : "") + " | "));
}

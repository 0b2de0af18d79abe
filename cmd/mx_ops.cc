// mx-ops: lists the operators mx knows (MXNet's names), with their inputs,
// outputs, parameters and kernels (devices, CPU implementations); the
// source of docs/operators.md.
#include <iostream>
#include <string>

#include "op/listing.h"
#include "program.h"

int main(int argc, char** argv) {
  CLI::App app{"List mx's operators with their inputs, outputs, parameters and kernels per device",
               "mx-ops"};
  std::string name;
  bool markdown = false, json = false;
  app.add_option("operator", name, "show only this operator (MXNet name or alias)");
  auto* md = app.add_flag("--markdown", markdown, "print Markdown (docs/operators.md)");
  app.add_flag("--json", json, "print JSON")->excludes(md);
  return mx::run_program(app, argc, argv, [&] {
    auto format = markdown ? mx::op::ListingFormat::kMarkdown
                  : json   ? mx::op::ListingFormat::kJson
                           : mx::op::ListingFormat::kText;
    mx::op::print_operators(std::cout, format, name);
  });
}

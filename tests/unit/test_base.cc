#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/context.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/file_util.h"
#include "base/int_tuple.h"
#include "base/json_escape.h"
#include "base/logging.h"
#include "base/shape.h"
#include "base/strings.h"
#include "base/threads.h"

using namespace mx;

TEST_CASE("Shape: construction, size and printing in MXNet's spelling") {
  Shape s{2, 3, 4};
  CHECK(s.ndim() == 3);
  CHECK(s.size() == 24);
  CHECK(s.prod(1, 3) == 12);
  CHECK(s.to_string() == "(2, 3, 4)");
  CHECK(Shape{5}.to_string() == "(5,)");
  CHECK(Shape::scalar().to_string() == "()");
  CHECK(Shape::scalar().size() == 1);
  CHECK(Shape().to_string() == "None");
  CHECK_FALSE(Shape().rank_known());
  CHECK_FALSE(Shape{2, -1}.is_known());
  CHECK(Shape{2, 0}.size() == 0);
  CHECK(Shape{1, 2} != Shape{2, 1});
  CHECK(Shape{1, 2} == Shape(std::vector<int64_t>{1, 2}));
}

TEST_CASE("Shape: parsing accepts MXNet's forms and rejects malformed text") {
  CHECK(Shape::parse("(3, 3)") == Shape{3, 3});
  CHECK(Shape::parse("[1,2,3]") == Shape{1, 2, 3});
  CHECK(Shape::parse("(5,)") == Shape{5});
  CHECK(Shape::parse("7") == Shape{7});
  CHECK(Shape::parse("()") == Shape::scalar());
  CHECK(Shape::parse("(2L, 3L)") == Shape{2, 3});
  CHECK(Shape::parse("(-1, 4)") == Shape{-1, 4});
  CHECK_FALSE(Shape::parse("None").rank_known());
  for (const char* bad :
       {"(3,,3)", "(3 3)", "(a)", "(3", "3)", "(-2, 1)", "(1,2)x", "(99999999999999999999)"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Shape::parse(bad), InputError);
  }
  CHECK_THROWS_WITH_AS(Shape::parse("(3,,3)"), "cannot parse shape '(3,,3)': empty dimension",
                       InputError);
  CHECK_THROWS_AS(Shape(std::vector<int64_t>(17, 1)), InputError);
}

TEST_CASE("integer tuples: one parser for shapes and axes, negatives where asked") {
  const TupleSyntax shape{"shape", "dimension", false, true};
  const TupleSyntax axes{"integer tuple", "element", true, false};
  CHECK(parse_int_tuple("(0, -3)", axes) == std::vector<int64_t>{0, -3});
  CHECK(parse_int_tuple("[4L,5]", shape) == std::vector<int64_t>{4, 5});
  CHECK_THROWS_WITH_AS(parse_int_tuple("(0, -3)", shape),
                       "cannot parse shape '(0, -3)': dimension -3 is negative", InputError);
  CHECK(parse_int_tuple(" ", shape).empty());
  CHECK(parse_int_tuple("()", axes).empty());
  CHECK_THROWS_WITH_AS(parse_int_tuple("", axes), "cannot parse integer tuple '': no values",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_int_tuple("(1 2)", axes),
                       "cannot parse integer tuple '(1 2)': expected ',' between elements",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_int_tuple("(1 2)", shape),
                       "cannot parse shape '(1 2)': expected ',' between dimensions", InputError);
  CHECK_THROWS_WITH_AS(Shape::parse(" None x"),
                       "cannot parse shape ' None x': unexpected text after None", InputError);
  CHECK_FALSE(Shape::parse(" None ").rank_known());
}

TEST_CASE("json_escape: dmlc's escapes, other control characters as \\u00XX") {
  CHECK(json_escape("plain") == "plain");
  CHECK(json_escape("a\"b\\c\nd\te\rf\x01") == "a\\\"b\\\\c\\nd\\te\\rf\\u0001");
}

TEST_CASE("DType: MXNet type flags, sizes and names") {
  CHECK(static_cast<int>(DType::kFloat32) == 0);
  CHECK(static_cast<int>(DType::kFloat64) == 1);
  CHECK(static_cast<int>(DType::kFloat16) == 2);
  CHECK(static_cast<int>(DType::kUint8) == 3);
  CHECK(static_cast<int>(DType::kInt32) == 4);
  CHECK(static_cast<int>(DType::kInt8) == 5);
  CHECK(static_cast<int>(DType::kInt64) == 6);
  CHECK(static_cast<int>(DType::kBFloat16) == 12);
  const size_t sizes[] = {4, 8, 2, 1, 4, 1, 8, 2};
  for (size_t f = 0; f < std::size(kAllDTypes); ++f) {
    const DType d = kAllDTypes[f];
    CHECK(dtype_size(d) == sizes[f]);
    CHECK(parse_dtype(dtype_name(d)) == d);
  }
  CHECK(is_valid_dtype_flag(6));
  CHECK(is_valid_dtype_flag(12));
  CHECK_FALSE(is_valid_dtype_flag(7));
  CHECK_FALSE(is_valid_dtype_flag(11));
  CHECK_FALSE(is_valid_dtype_flag(-1));
  CHECK_THROWS_AS(parse_dtype("float128"), InputError);
  CHECK(dtype_of<half_t> == DType::kFloat16);
  CHECK(dtype_of<bf16_t> == DType::kBFloat16);
}

TEST_CASE("half_t: every float16 bit pattern survives float and back") {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    float f = half_t::to_float(static_cast<uint16_t>(bits));
    uint16_t back = half_t::from_float(f);
    if (std::isnan(f)) {
      CHECK(std::isnan(half_t::to_float(back)));
    } else if (back != bits) {
      FAIL("bits ", bits, " -> ", f, " -> ", back);
    }
  }
}

TEST_CASE("half_t: rounding from float is to nearest, ties to even") {
  CHECK(static_cast<float>(half_t(1.0f)) == 1.0f);
  CHECK(static_cast<float>(half_t(65504.0f)) == 65504.0f);
  CHECK(std::isinf(static_cast<float>(half_t(65520.0f))));  // rounds up to inf
  CHECK(static_cast<float>(half_t(65519.0f)) == 65504.0f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1.
  CHECK(static_cast<float>(half_t(1.0f + std::ldexp(1.0f, -11))) == 1.0f);
  CHECK(static_cast<float>(half_t(1.0f + 3 * std::ldexp(1.0f, -11))) ==
        1.0f + std::ldexp(1.0f, -9));
  // Smallest subnormal and below half of it.
  CHECK(static_cast<float>(half_t(std::ldexp(1.0f, -24))) == std::ldexp(1.0f, -24));
  CHECK(static_cast<float>(half_t(std::ldexp(1.0f, -26))) == 0.0f);
  CHECK(half_t(-0.0f).bits == 0x8000);
  CHECK(half_t(-2.5f).bits == 0xc100);
}

TEST_CASE("Context: parse and print") {
  CHECK(Context::parse("cpu") == Context::cpu());
  CHECK(Context::parse("gpu:1") == Context::gpu(1));
  CHECK(Context::parse("gpu(2)") == Context::gpu(2));
  CHECK(Context::parse("cpu_pinned:0").type == DeviceType::kCPUPinned);
  CHECK(Context::gpu(3).to_string() == "gpu:3");
  for (const char* bad : {"tpu", "gpu:", "gpu:x", "cpu:1:2", "", "gpu:-1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Context::parse(bad), InputError);
  }
}

TEST_CASE("strings: edit distance and suggestions") {
  CHECK(edit_distance("kernel", "kernal") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("flaw", "lawn") == 2);
  CHECK(closest_match("kernal", {"kernel", "stride", "pad"}) == "kernel");
  CHECK(closest_match("zzzzzz", {"kernel", "stride", "pad"}).empty());
  CHECK(did_you_mean("strid", {"stride"}) == " (did you mean 'stride'?)");
  CHECK(split("a,b,,c", ',') == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(trim("  x y \n") == "x y");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(12) == "12 B");
}

TEST_CASE("errors carry their exit code and MX_CHECK names the condition") {
  CHECK(Error("x").exit_code() == 1);
  CHECK(InputError("x").exit_code() == 2);
  try {
    int n = 3;
    MX_CHECK(n < 2, "n is ", n);
    FAIL("no throw");
  } catch (const Error& e) {
    std::string what = e.what();
    CHECK(what.find("n < 2") != std::string::npos);
    CHECK(what.find("n is 3") != std::string::npos);
  }
}

TEST_CASE("logging levels parse and filter") {
  CHECK(parse_log_level("debug") == LogLevel::kDebug);
  CHECK(parse_log_level("warn") == LogLevel::kWarning);
  CHECK_THROWS_AS(parse_log_level("loud"), InputError);
  LogLevel saved = log_level();
  set_log_level(LogLevel::kError);
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  MX_LOG(kInfo) << count();
  CHECK(evaluated == 0);  // below the level: the stream is not evaluated
  set_log_level(saved);
}

TEST_CASE("thread budget is positive") { CHECK(thread_budget() >= 1); }

TEST_CASE("write_file_atomically leaves the old file when writing fails") {
  std::string path = "test_base_atomic.txt";
  write_file_atomically(path, [](std::ostream& out) { out << "good"; });
  CHECK(file_size(path) == 4);
  CHECK_THROWS_AS(write_file_atomically(path,
                                        [](std::ostream& out) {
                                          out << "partial";
                                          throw Error("interrupted");
                                        }),
                  Error);
  CHECK(file_size(path) == 4);
  std::remove(path.c_str());
  CHECK_THROWS_AS(file_size(path), InputError);
  CHECK_THROWS_AS(write_file_atomically("no/such/dir/file", [](std::ostream&) {}), Error);
}

TEST_CASE("bfloat16 rounds to nearest even and keeps infinities and NaN") {
  CHECK(bf16_t(1.0f).bits == 0x3f80);
  CHECK(bf16_t(1.00390625f).bits == 0x3f80);  // halfway: to even
  CHECK(bf16_t(1.01171875f).bits == 0x3f82);  // halfway: to even (up)
  CHECK(bf16_t(1.0078125f).bits == 0x3f81);   // exact
  CHECK(bf16_t(-2.5f).bits == 0xc020);
  CHECK(bf16_t(3.0e38f).bits == 0x7f62);
  CHECK(std::isinf(float(bf16_t(std::numeric_limits<float>::infinity()))));
  CHECK(std::isnan(float(bf16_t(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(float(std::numeric_limits<bf16_t>::lowest()) == -0x1.fep127f);
  bf16_t v = 1.0f;
  v += 0.5f;
  CHECK(float(v) == 1.5f);
}

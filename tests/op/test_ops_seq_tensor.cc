// The tensor operators of the sequence models (take, where, stack, SwapAxis,
// squeeze, slice, tile, repeat, broadcast_to/like/axis, _arange,
// _contrib_arange_like, _zeros, _ones, gather_nd, erf, topk, norm):
// gradients against finite differences, forward values and semantics, shape
// and type inference from partial information, and the messages of bad
// parameters and shapes. Their MXNet 1.9.1 reference cases are in the
// tensor fixture family (test_ops_tensor runs them).
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.h"
#include "infer_helpers.h"
#include "op/invoke.h"
#include "op/registry.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;
using op::AttrMap;
using op::OpInstance;
using op::ShapeVector;

namespace {

// The message of the error the forward pass raises when its output is read.
std::string run_error(const std::string& name, const std::vector<NDArray>& inputs,
                      const AttrMap& attrs) {
  try {
    auto out = op::invoke(name, inputs, attrs);
    out[0].wait_to_read();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

NDArray f32(const Shape& shape, const std::vector<float>& v) {
  return NDArray::from_vector<float>(shape, v);
}

std::vector<float> values(const NDArray& a) { return a.to_vector<float>(); }

GradientCheckOptions indices_at(int input, int range) {
  GradientCheckOptions o;
  o.skip_inputs = {input};
  o.integer_inputs = {input};
  o.integer_range = range;
  return o;
}

}  // namespace

// ---- gradients ----------------------------------------------------------------

TEST_CASE("gradients: take in every mode and on every axis") {
  // Indices run past the axis (clip and wrap them).
  for (const char* mode : {"clip", "wrap"}) {
    const std::string m = mode;
    CAPTURE(m);
    check_gradient("take", {{"mode", mode}}, {Shape{4, 3}, Shape{2, 3}}, indices_at(1, 7));
    check_gradient("take", {{"mode", mode}, {"axis", "1"}}, {Shape{2, 3, 4}, Shape{5}},
                   indices_at(1, 5));
    check_gradient("take", {{"mode", mode}, {"axis", "-1"}}, {Shape{3, 5}, Shape{2, 2}},
                   indices_at(1, 8));
  }
  check_gradient("take", {{"mode", "raise"}}, {Shape{5, 2}, Shape{7}}, indices_at(1, 5));
  GradientCheckOptions big = indices_at(1, 300);
  big.max_checks_per_input = 20;
  check_gradient("take", {}, {Shape{300, 200}, Shape{150}}, big);
}

TEST_CASE("gradients: where, gather_nd") {
  GradientCheckOptions cond = indices_at(0, 2);
  check_gradient("where", {}, {Shape{3, 4}, Shape{3, 4}, Shape{3, 4}}, cond);
  check_gradient("where", {}, {Shape{3}, Shape{3, 2, 2}, Shape{3, 2, 2}}, cond);
  check_gradient("gather_nd", {}, {Shape{3, 4, 2}, Shape{2, 5}}, indices_at(1, 3));
  check_gradient("gather_nd", {}, {Shape{3, 3}, Shape{2, 2, 3}}, indices_at(1, 3));
  check_gradient("gather_nd", {}, {Shape{3, 2}, Shape{1, 6}}, indices_at(1, 3));
}

TEST_CASE("gradients: stack, SwapAxis, squeeze, slice") {
  check_gradient("stack", {{"num_args", "3"}}, {Shape{2, 3}, Shape{2, 3}, Shape{2, 3}});
  check_gradient("stack", {{"num_args", "2"}, {"axis", "1"}}, {Shape{2, 3}, Shape{2, 3}});
  check_gradient("stack", {{"num_args", "2"}, {"axis", "-1"}}, {Shape{3, 2}, Shape{3, 2}});
  check_gradient("SwapAxis", {{"dim1", "0"}, {"dim2", "1"}}, {Shape{3, 2, 4}});
  check_gradient("swapaxes", {{"dim1", "-1"}, {"dim2", "0"}}, {Shape{2, 3, 4}});
  check_gradient("SwapAxis", {}, {Shape{2, 3}});
  check_gradient("squeeze", {}, {Shape{1, 3, 1, 2}});
  check_gradient("squeeze", {{"axis", "(0, -2)"}}, {Shape{1, 3, 1, 2}});
  for (const AttrMap& a :
       std::vector<AttrMap>{{{"begin", "(0, 1)"}, {"end", "(2, 4)"}},
                            {{"begin", "(None, 0)"}, {"end", "(None, 3)"}, {"step", "(-1, 2)"}},
                            {{"begin", "(1,)"}, {"end", "(3,)"}},
                            {{"begin", "(2, 3)"}, {"end", "(0, None)"}, {"step", "(-1, -2)"}},
                            {{"begin", "(-10, 1)"}, {"end", "(10, 10)"}, {"step", "(2, 2)"}}})
    check_gradient("slice", a, {Shape{4, 5}});
  check_gradient("crop", {{"begin", "(1, 0, 1)"}, {"end", "(2, 2, 3)"}}, {Shape{3, 2, 4}});
}

TEST_CASE("gradients: tile, repeat, broadcast_to, broadcast_like, broadcast_axis") {
  check_gradient("tile", {{"reps", "(2, 3)"}}, {Shape{2, 2}});
  check_gradient("tile", {{"reps", "(2,)"}}, {Shape{2, 3}});
  check_gradient("tile", {{"reps", "(2, 1, 2)"}}, {Shape{2, 3}});
  check_gradient("tile", {{"reps", "(3, 1, 2, 1)"}}, {Shape{2, 1, 3, 2}});
  check_gradient("repeat", {{"repeats", "2"}}, {Shape{2, 3}});
  check_gradient("repeat", {{"repeats", "3"}, {"axis", "0"}}, {Shape{2, 3}});
  check_gradient("repeat", {{"repeats", "2"}, {"axis", "-1"}}, {Shape{2, 3, 2}});
  check_gradient("broadcast_to", {{"shape", "(2, 3, 4)"}}, {Shape{2, 1, 4}});
  check_gradient("broadcast_to", {{"shape", "(0, 3)"}}, {Shape{2, 1}});
  check_gradient("broadcast_like", {}, {Shape{1, 3, 1}, Shape{2, 3, 4}});
  check_gradient("broadcast_like", {{"lhs_axes", "(0, 2)"}, {"rhs_axes", "(1, 0)"}},
                 {Shape{1, 3, 1}, Shape{5, 2}});
  check_gradient("broadcast_axis", {{"axis", "(0, 2)"}, {"size", "(2, 3)"}}, {Shape{1, 2, 1}});
  check_gradient("broadcast_axes", {{"axis", "-1"}, {"size", "4"}}, {Shape{3, 1}});
  GradientCheckOptions big;
  big.max_checks_per_input = 20;
  check_gradient("broadcast_to", {{"shape", "(64, 700)"}}, {Shape{1, 700}}, big);
  check_gradient("tile", {{"reps", "(40, 1)"}}, {Shape{20, 60}}, big);
}

TEST_CASE("gradients: erf, norm, topk, _contrib_arange_like") {
  check_gradient("erf", {}, {Shape{3, 7}}, [] {
    GradientCheckOptions o;
    o.low = -3;
    o.high = 3;
    return o;
  }());
  GradientCheckOptions away;
  away.min_abs = 0.1;  // |x| has a kink at 0
  for (const char* ord : {"1", "2"}) {
    for (const AttrMap& a : std::vector<AttrMap>{{},
                                                 {{"axis", "1"}},
                                                 {{"axis", "(0, -1)"}, {"keepdims", "True"}},
                                                 {{"keepdims", "True"}}}) {
      AttrMap attrs = a;
      attrs["ord"] = ord;
      check_gradient("norm", attrs, {Shape{2, 3, 4}}, away);
    }
  }
  // One long output: split among several GPU blocks (reduce_split_parts).
  GradientCheckOptions long_norm = away;
  long_norm.max_checks_per_input = 20;
  check_gradient("norm", {{"ord", "2"}}, {Shape{60000}}, long_norm);
  for (const char* ret : {"value", "both", "indices", "mask"}) {
    const std::string r = ret;
    CAPTURE(r);
    check_gradient("topk", {{"k", "2"}, {"ret_typ", ret}}, {Shape{3, 5}});
    check_gradient("topk", {{"k", "2"}, {"axis", "0"}, {"ret_typ", ret}, {"is_ascend", "True"}},
                   {Shape{4, 3, 2}});
    check_gradient("topk", {{"k", "3"}, {"axis", "None"}, {"ret_typ", ret}}, {Shape{2, 3}});
  }
  check_gradient("topk", {{"k", "0"}, {"ret_typ", "value"}}, {Shape{2, 6}});
  check_gradient("_contrib_arange_like", {}, {Shape{2, 3}});
  check_gradient("_contrib_arange_like", {{"axis", "1"}}, {Shape{2, 3}});
}

// ---- forward values and semantics ----------------------------------------------------

TEST_CASE("take clips, wraps or refuses indices out of range") {
  NDArray x = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  NDArray idx = f32({5}, {-1, 0, 5, 2.7f, -0.5f});
  CHECK(values(op::invoke("take", {x, idx})[0]) ==
        std::vector<float>{0, 1, 0, 1, 4, 5, 4, 5, 0, 1});
  CHECK(values(op::invoke("take", {x, idx}, {{"mode", "wrap"}})[0]) ==
        std::vector<float>{4, 5, 0, 1, 4, 5, 4, 5, 0, 1});
  CHECK(values(op::invoke("take", {x, f32({2}, {1, 0})}, {{"axis", "1"}})[0]) ==
        std::vector<float>{1, 0, 3, 2, 5, 4});
  CHECK(run_error("take", {x, f32({2}, {0, 2.5f})}, {{"mode", "raise"}}) ==
        "in operation 'take': take: index 2.5 is out of range [0, 2] (mode 'raise')");
  CHECK(run_error("take", {x, f32({1}, {-1})}, {{"mode", "raise"}}) ==
        "in operation 'take': take: index -1 is out of range [0, 2] (mode 'raise')");
  // Integer data and indices of another type.
  NDArray ints = NDArray::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  auto y = op::invoke("take", {ints, NDArray::from_vector<int64_t>({1}, {1})})[0];
  CHECK(y.dtype() == DType::kInt32);
  CHECK(y.to_vector<int32_t>() == std::vector<int32_t>{3, 4});
}

TEST_CASE("gather_nd wraps negative indices and refuses those out of range") {
  NDArray x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  CHECK(values(op::invoke("gather_nd", {x, f32({2, 2}, {-1, 0, 2, -3})})[0]) ==
        std::vector<float>{5, 0});
  CHECK(values(op::invoke("gather_nd", {x, f32({1, 2}, {-2, 1})})[0]) ==
        std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(run_error("gather_nd", {x, f32({1, 1}, {2})}, {}) ==
        "in operation 'gather_nd': gather_nd: index 2 is out of bounds for axis 0 with size 2");
  CHECK(run_error("gather_nd", {x, f32({2, 1}, {0, -4})}, {}) ==
        "in operation 'gather_nd': gather_nd: index -4 is out of bounds for axis 1 with size 3");
  // The gradient of a repeated position adds up; that of the indices is 0.
  OpInstance op("gather_nd", {});
  NDArray idx = f32({1, 3}, {1, -1, 0});
  NDArray y = op::invoke(op, {x, idx})[0];
  NDArray gx = NDArray::zeros({2, 3}), gi = NDArray::full({1, 3}, 7.0);
  op::invoke_backward(op, {f32({3, 3}, {1, 1, 1, 2, 2, 2, 4, 4, 4})}, {x, idx}, {y}, {}, {gx, gi},
                      {op::OpReq::kWrite, op::OpReq::kWrite});
  CHECK(values(gx) == std::vector<float>{4, 4, 4, 3, 3, 3});
  CHECK(values(gi) == std::vector<float>{0, 0, 0});
}

TEST_CASE("where picks elements or rows; NaN is true") {
  NDArray x = f32({2, 2}, {1, 2, 3, 4}), y = f32({2, 2}, {5, 6, 7, 8});
  CHECK(values(op::invoke("where", {f32({2, 2}, {0, 1, -1, NAN}), x, y})[0]) ==
        std::vector<float>{5, 2, 3, 4});
  CHECK(values(op::invoke("where", {f32({2}, {0, 2}), x, y})[0]) == std::vector<float>{5, 6, 3, 4});
  auto z = op::invoke("where", {NDArray::from_vector<int32_t>({2}, {1, 0}), x, y})[0];
  CHECK(values(z) == std::vector<float>{1, 2, 7, 8});
}

TEST_CASE("slice clamps bounds as MXNet does") {
  NDArray x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto s = [&](const AttrMap& a) { return op::invoke("slice", {x}, a)[0]; };
  CHECK(values(s({{"begin", "(None, 0)"}, {"end", "(None, 3)"}, {"step", "(-1, 2)"}})) ==
        std::vector<float>{8, 10, 4, 6, 0, 2});
  CHECK(values(s({{"begin", "(-10,)"}, {"end", "(None,)"}})) == values(x));
  CHECK(values(s({{"begin", "(10,)"}, {"end", "(-10,)"}, {"step", "(-1,)"}})) ==
        std::vector<float>{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});
  CHECK(s({{"begin", "(2, 0)"}, {"end", "(1, None)"}}).shape() == Shape{0, 4});
  CHECK(s({{"begin", "(5,)"}, {"end", "(10,)"}}).shape() == Shape{0, 4});
  CHECK(s({{"begin", "()"}, {"end", "()"}}).shape() == Shape{3, 4});
}

TEST_CASE("tile, repeat and the broadcasts repeat elements in MXNet's order") {
  NDArray x = f32({2, 2}, {1, 2, 3, 4});
  CHECK(values(op::invoke("tile", {x}, {{"reps", "(1, 2)"}})[0]) ==
        std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(op::invoke("tile", {x}, {{"reps", "()"}})[0].shape() == Shape{2, 2});
  CHECK(values(op::invoke("repeat", {x}, {{"repeats", "2"}})[0]) ==
        std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4});
  CHECK(values(op::invoke("repeat", {x}, {{"repeats", "2"}, {"axis", "0"}})[0]) ==
        std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(op::invoke("repeat", {x}, {{"repeats", "0"}})[0].shape() == Shape{0});
  CHECK(values(op::invoke("broadcast_to", {f32({1, 2}, {1, 2})}, {{"shape", "(2, 0)"}})[0]) ==
        std::vector<float>{1, 2, 1, 2});
  CHECK(op::invoke("broadcast_axis", {f32({1, 2}, {1, 2})}, {{"axis", "0"}, {"size", "0"}})[0]
            .shape() == Shape{0, 2});
  // Every element type moves.
  NDArray ints = NDArray::from_vector<int8_t>({2}, {-3, 5});
  CHECK(op::invoke("tile", {ints}, {{"reps", "(2,)"}})[0].to_vector<int8_t>() ==
        std::vector<int8_t>{-3, 5, -3, 5});
}

TEST_CASE("_arange, _contrib_arange_like, _zeros and _ones compute MXNet's values") {
  auto arange = [](const AttrMap& a) { return op::invoke("_arange", {}, a)[0]; };
  CHECK(values(arange({{"start", "2"}, {"stop", "5"}})) == std::vector<float>{2, 3, 4});
  CHECK(values(arange({{"start", "3"}})) == std::vector<float>{0, 1, 2});
  CHECK(values(arange({{"start", "0"}, {"stop", "3"}, {"repeat", "2"}})) ==
        std::vector<float>{0, 0, 1, 1, 2, 2});
  CHECK(values(arange({{"start", "5"}, {"stop", "1"}, {"step", "-1.5"}})) ==
        std::vector<float>{5, 3.5f, 2});
  // Integer dtypes truncate start and step first; uint8 wraps.
  CHECK(arange({{"start", "0.5"}, {"stop", "5"}, {"step", "1.5"}, {"dtype", "int32"}})
            .to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2});
  CHECK(arange({{"start", "254"}, {"stop", "258"}, {"dtype", "uint8"}}).to_vector<uint8_t>() ==
        std::vector<uint8_t>{254, 255, 0, 1});
  // float32 arithmetic, as MXNet: 16777215 + 2 rounds to 16777216.
  CHECK(values(arange({{"start", "16777215"}, {"stop", "16777218"}})) ==
        std::vector<float>{16777215, 16777216, 16777216});
  auto f16 = arange({{"start", "0"}, {"stop", "1"}, {"step", "0.25"}, {"dtype", "float16"}});
  CHECK(static_cast<float>(f16.to_vector<half_t>()[3]) == 0.75f);
  CHECK(arange({{"start", "0"}, {"stop", "1"}, {"step", "0.1"}, {"dtype", "float64"}})
            .to_vector<double>()[7] == 0.7000000000000001);
  NDArray x = NDArray::zeros({2, 3}, Context::cpu(), DType::kFloat64);
  auto like = op::invoke("_contrib_arange_like", {x}, {{"repeat", "2"}, {"start", "1"}})[0];
  CHECK(like.dtype() == DType::kFloat64);
  CHECK(like.to_vector<double>() == std::vector<double>{1, 1, 2, 2, 3, 3});
  CHECK(values(op::invoke("_contrib_arange_like", {NDArray::zeros({2, 4})},
                          {{"axis", "-1"}, {"step", "0.5"}})[0]) ==
        std::vector<float>{0, 0.5f, 1, 1.5f});
  auto ones = op::invoke("_ones", {}, {{"shape", "(2, 2)"}, {"dtype", "int64"}})[0];
  CHECK(ones.to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(values(op::invoke("_zeros", {}, {{"shape", "(3,)"}})[0]) == std::vector<float>{0, 0, 0});
  CHECK(op::invoke("arange", {}, {{"start", "2"}})[0].shape() == Shape{2});
}

TEST_CASE("topk orders ties by index and puts NaN last") {
  NDArray x = f32({1, 6}, {1, 2, 2, 1, 2, 0});
  auto both = op::invoke("topk", {x}, {{"k", "4"}, {"ret_typ", "both"}});
  CHECK(values(both[0]) == std::vector<float>{2, 2, 2, 1});
  CHECK(values(both[1]) == std::vector<float>{1, 2, 4, 0});
  auto asc = op::invoke(
      "topk", {x}, {{"k", "3"}, {"ret_typ", "indices"}, {"is_ascend", "True"}, {"dtype", "int64"}});
  CHECK(asc[0].to_vector<int64_t>() == std::vector<int64_t>{5, 0, 3});
  NDArray nan = f32({4}, {1, NAN, 3, 2});
  CHECK(values(op::invoke("topk", {nan}, {{"k", "0"}, {"ret_typ", "indices"}})[0]) ==
        std::vector<float>{2, 3, 0, 1});
  CHECK(values(op::invoke("topk", {nan},
                          {{"k", "0"}, {"ret_typ", "indices"}, {"is_ascend", "True"}})[0]) ==
        std::vector<float>{0, 3, 2, 1});
  CHECK(values(op::invoke("topk", {f32({2, 2}, {1, 4, 3, 2})},
                          {{"k", "2"}, {"axis", "None"}, {"ret_typ", "mask"}})[0]) ==
        std::vector<float>{0, 1, 1, 0});
  // value mode has a hidden second output, the indices its gradient reads.
  OpInstance value("topk", {{"ret_typ", "value"}});
  CHECK(value.output_names() == std::vector<std::string>{"output0", "output1"});
  CHECK(value.num_visible_outputs() == 1);
  CHECK(OpInstance("topk", {}).output_names() == std::vector<std::string>{"output"});
}

TEST_CASE("norm and erf compute MXNet's values") {
  NDArray x = f32({2, 2}, {3, -4, 0, 0});
  CHECK(values(op::invoke("norm", {x}, {{"axis", "1"}})[0]) == std::vector<float>{5, 0});
  CHECK(values(op::invoke("norm", {x}, {{"ord", "1"}})[0]) == std::vector<float>{7});
  CHECK(op::invoke("norm", {x}, {{"keepdims", "True"}})[0].shape() == Shape{1, 1});
  // At a zero norm the gradient is 0 (a subgradient), not NaN.
  OpInstance norm("norm", {{"axis", "1"}});
  NDArray y = op::invoke(norm, {x})[0];
  NDArray g = NDArray::zeros({2, 2});
  op::invoke_backward(norm, {f32({2}, {1, 1})}, {x}, {y}, {}, {g}, {op::OpReq::kWrite});
  CHECK(values(g) == std::vector<float>{0.6f, -0.8f, 0, 0});
  auto e = values(op::invoke("erf", {f32({3}, {-0.5f, 0, 2})})[0]);
  CHECK(e[0] == doctest::Approx(std::erf(-0.5)).epsilon(1e-6));
  CHECK(e[1] == 0);
  CHECK(e[2] == doctest::Approx(std::erf(2.0)).epsilon(1e-6));
}

// ---- shape and type inference ----------------------------------------------------

TEST_CASE("shape inference of the sequence tensor operators") {
  CHECK(out_shape("take", {{"axis", "1"}}, {Shape{2, 3, 4}, Shape{5, 6}}) == Shape{2, 5, 6, 4});
  CHECK(out_shape("gather_nd", {}, {Shape{2, 3, 4}, Shape{2, 5}}) == Shape{5, 4});
  CHECK(out_shape("gather_nd", {}, {Shape{2, 3}, Shape{2, 2, 2}}) == Shape{2, 2});
  CHECK(out_shape("stack", {{"num_args", "2"}, {"axis", "-1"}}, {Shape{2, 3}, Shape{2, 3}}) ==
        Shape{2, 3, 2});
  // stack: inputs from each other and from the output.
  auto st = infer("stack", {{"num_args", "2"}, {"axis", "1"}}, {Shape{2, -1}, Shape()},
                  {Shape{-1, 2, 5}});
  CHECK(st.in[1] == Shape{2, 5});
  CHECK(infer("SwapAxis", {{"dim1", "0"}, {"dim2", "2"}}, {Shape()}, {Shape{4, 3, 2}}).in[0] ==
        Shape{2, 3, 4});
  CHECK(out_shape("squeeze", {}, {Shape{1, 1}}) == Shape{1});
  CHECK(!infer("squeeze", {}, {Shape{1, -1}}).out[0].rank_known());
  CHECK(infer("squeeze", {{"axis", "1"}}, {Shape{2, -1, -1}}, {Shape{2, 3}}).in[0] ==
        Shape{2, 1, 3});
  CHECK(out_shape("slice", {{"begin", "(1,)"}, {"end", "(None,)"}}, {Shape{-1, 4}}) ==
        Shape{-1, 4});
  CHECK(infer("slice", {{"begin", "(1,)"}, {"end", "(2,)"}}, {Shape{5, -1}}, {Shape{1, 7}}).in[0] ==
        Shape{5, 7});
  CHECK(out_shape("tile", {{"reps", "(2, 1, 3)"}}, {Shape{4, 5}}) == Shape{2, 4, 15});
  CHECK(infer("tile", {{"reps", "(2, 3)"}}, {Shape{-1, 2}}, {Shape{8, 6}}).in[0] == Shape{4, 2});
  CHECK(out_shape("repeat", {{"repeats", "3"}}, {Shape{2, 2}}) == Shape{12});
  CHECK(out_shape("broadcast_like", {{"lhs_axes", "(-1,)"}, {"rhs_axes", "(0,)"}},
                  {Shape{2, 1}, Shape{7, 3}}) == Shape{2, 7});
  CHECK(out_shape("broadcast_like", {}, {Shape{1, 3}, Shape{-1, 3}}) == Shape{1, 3});
  CHECK(out_shape("_arange", {{"start", "0"}, {"stop", "1"}, {"step", "0.3"}}, {}) == Shape{4});
  CHECK(out_shape("_arange", {{"start", "1"}, {"infer_range", "True"}}, {}) == Shape{-1});
  CHECK(out_shape("_contrib_arange_like", {{"axis", "1"}}, {Shape{2, 7}}) == Shape{7});
  CHECK(out_shape("topk", {{"k", "2"}, {"axis", "0"}}, {Shape{5, 3}}) == Shape{2, 3});
  CHECK(out_shape("topk", {{"k", "-1"}}, {Shape{5, 3}}) == Shape{5, 3});
  CHECK(out_shape("topk", {{"k", "2"}, {"ret_typ", "mask"}}, {Shape{5, 3}}) == Shape{5, 3});
  CHECK(out_shape("topk", {{"k", "4"}, {"axis", "None"}}, {Shape{5, 3}}) == Shape{4});
  CHECK(out_shape("norm", {{"axis", "(0, 2)"}}, {Shape{2, 3, 4}}) == Shape{3});
  CHECK(out_shape("norm", {}, {Shape{2, 3, 4}}) == Shape{1});
}

TEST_CASE("_zeros leaves MXNet's 0 dimensions to the graph") {
  // The begin state of an exported Gluon LSTM: (layers, 0, hidden), the 0
  // being the batch that the operator reading it (RNN) fills in.
  auto z = infer("_zeros", {{"shape", "(2, 0, 5)"}}, {});
  CHECK(z.out[0] == Shape{2, -1, 5});
  CHECK(infer("_zeros", {{"shape", "(2, 0, 5)"}}, {}, {Shape{2, 7, 5}}).out[0] == Shape{2, 7, 5});
  CHECK(!infer("_ones", {}, {}).out[0].rank_known());
  CHECK(infer_error("_zeros", {{"shape", "(2, 0, 5)"}}, {}, {Shape{3, 7, 5}}) ==
        "layer: output: shape (3, 7, 5) conflicts with (2, -1, 5)");
  CHECK_THROWS_WITH_AS(op::invoke("_zeros", {}, {{"shape", "(0, 3)"}}),
                       "_zeros: cannot infer the shape of output 0 from inputs", InputError);
}

TEST_CASE("type inference of the sequence tensor operators") {
  auto types = [](const std::string& name, const AttrMap& attrs, op::DTypeVector in) {
    OpInstance op(name, attrs, "layer");
    op::DTypeVector aux, out(op.output_names().size());
    op.infer_type(in, aux, out);
    return std::pair{in, out};
  };
  auto take = types("take", {}, {DType::kFloat64, std::nullopt});
  CHECK(take.second[0] == DType::kFloat64);
  CHECK(take.first[1] == DType::kFloat64);
  CHECK(types("take", {}, {DType::kInt8, DType::kInt64}).second[0] == DType::kInt8);
  auto where = types("where", {}, {DType::kInt32, std::nullopt, DType::kFloat16});
  CHECK(where.first[0] == DType::kInt32);
  CHECK(where.first[1] == DType::kFloat16);
  CHECK(where.second[0] == DType::kFloat16);
  CHECK_THROWS_AS(types("where", {}, {std::nullopt, DType::kFloat32, DType::kFloat64}), InputError);
  auto both = types("topk", {{"ret_typ", "both"}, {"dtype", "int32"}}, {DType::kFloat64});
  CHECK(both.second == op::DTypeVector{DType::kFloat64, DType::kInt32});
  CHECK(types("topk", {}, {DType::kFloat64}).second[0] == DType::kFloat32);
  CHECK(types("topk", {{"ret_typ", "mask"}}, {DType::kInt32}).second[0] == DType::kInt32);
  CHECK(types("_arange", {{"start", "1"}, {"dtype", "int64"}}, {}).second[0] == DType::kInt64);
  CHECK(types("_zeros", {{"dtype", "float16"}}, {}).second[0] == DType::kFloat16);
  CHECK(types("broadcast_like", {}, {DType::kFloat32, DType::kInt32}).second[0] == DType::kFloat32);
  CHECK(types("norm", {{"out_dtype", "float32"}}, {DType::kFloat32}).second[0] == DType::kFloat32);
  CHECK_THROWS_WITH_AS(types("norm", {{"out_dtype", "float64"}}, {DType::kFloat32}),
                       "layer: out_dtype float64 differs from the input's float32; norm gives the "
                       "input's type",
                       InputError);
}

// ---- bad input ----------------------------------------------------------------

TEST_CASE("shape errors of the sequence tensor operators name the problem") {
  const Shape x{2, 3, 4};
  CHECK(infer_error("take", {{"axis", "3"}}, {x, Shape{2}}) ==
        "layer: axis 3 is out of range for an array of 3 dimensions (shape (2, 3, 4))");
  CHECK(infer_error("take", {}, {x, Shape::scalar()}) ==
        "layer: input 'indices' must have at least 1 dimension");
  CHECK(infer_error("gather_nd", {}, {x, Shape{2}}) ==
        "layer: input 'indices' of shape (2,) must have at least 2 dimensions (coordinates, "
        "positions...)");
  CHECK(infer_error("gather_nd", {}, {x, Shape{4, 2}}) ==
        "layer: input 'indices' of shape (4, 2) gives 4 coordinates but the data has 3 "
        "dimensions (shape (2, 3, 4))");
  CHECK(infer_error("where", {}, {Shape{3}, Shape{2, 2}, Shape{2, 2}}) ==
        "layer: a 1-D condition of shape (3,) must have one element per row of x (2, 2)");
  CHECK(infer_error("where", {}, {Shape{2, 2}, Shape{2, 2}, Shape{2, 3}}) ==
        "layer: input 'y': shape (2, 2) conflicts with (2, 3)");
  CHECK(infer_error("stack", {{"num_args", "2"}}, {Shape{1, 2}, Shape{1, 3}}) ==
        "layer: input 'arg1' has shape (1, 3) but the arrays to stack must all have shape (1, 2)");
  CHECK(infer_error("stack", {{"num_args", "2"}, {"axis", "3"}}, {Shape{1, 2}, Shape{1, 2}}) ==
        "layer: axis 3 is out of range [-3, 2] for inputs of 2 dimensions");
  CHECK(infer_error("SwapAxis", {{"dim1", "3"}}, {x}) ==
        "layer: axis 3 is out of range for an array of 3 dimensions (shape (2, 3, 4))");
  CHECK(infer_error("squeeze", {{"axis", "1"}}, {x}) ==
        "layer: cannot squeeze axis 1 of input (2, 3, 4): its size is not 1");
  CHECK(infer_error("squeeze", {{"axis", "(0, -3)"}}, {Shape{1, 2, 3}}) ==
        "layer: axis (0, -3) names axis 0 twice");
  CHECK(infer_error("slice", {{"begin", "(0, 0, 0, 0)"}, {"end", "(1, 1, 1, 1)"}}, {x}) ==
        "layer: begin (0, 0, 0, 0) slices 4 axes but the input has shape (2, 3, 4)");
  CHECK(infer_error("broadcast_to", {{"shape", "(2, 4)"}}, {Shape{1, 3}}) ==
        "layer: input of shape (1, 3) cannot be broadcast to (2, 4): axis 1 has size 3, not 1 "
        "or 4");
  CHECK(infer_error("broadcast_to", {{"shape", "(3,)"}}, {Shape{1, 3}}) ==
        "layer: input of shape (1, 3) cannot be broadcast to (3,)");
  CHECK(infer_error("broadcast_like", {{"lhs_axes", "(0,)"}, {"rhs_axes", "(1,)"}},
                    {Shape{2, 1}, Shape{5, 4}}) ==
        "layer: axis 0 of lhs (2, 1) has size 2, not 1: it cannot be broadcast to axis 1 of rhs "
        "(5, 4)");
  CHECK(infer_error("broadcast_like", {{"lhs_axes", "(0,)"}, {"rhs_axes", "(0, 1)"}},
                    {Shape{1, 1}, Shape{5, 4}}) ==
        "layer: lhs_axes (0,) and rhs_axes (0, 1) must have the same length");
  CHECK(infer_error("broadcast_axis", {{"axis", "1"}, {"size", "3"}}, {Shape{1, 2, 1}}) ==
        "layer: axis 1 of input (1, 2, 1) has size 2, not 1: it cannot be broadcast");
  CHECK(infer_error("repeat", {{"repeats", "2"}, {"axis", "2"}}, {Shape{2, 2}}) ==
        "layer: axis 2 is out of range for an array of 2 dimensions (shape (2, 2))");
  CHECK(infer_error("_arange", {{"start", "5"}, {"stop", "1"}}, {}) ==
        "layer: invalid range (start, stop, step) = (5, 1, 1): it holds no value");
  CHECK(infer_error("_contrib_arange_like", {{"axis", "2"}}, {Shape{2, 3}}) ==
        "layer: axis 2 is out of range for an array of 2 dimensions (shape (2, 3))");
  CHECK(infer_error("topk", {{"k", "6"}}, {Shape{2, 5}}) ==
        "layer: k=6 is more than the 5 elements along the axis (shape (2, 5))");
  CHECK(infer_error("norm", {{"axis", "(0, 0)"}}, {x}) == "layer: axis (0, 0) names axis 0 twice");
  CHECK(infer_error("norm", {{"axis", "3"}}, {x}) ==
        "layer: axis 3 is out of range for an array of 3 dimensions (shape (2, 3, 4))");
}

TEST_CASE("parameter errors of the sequence tensor operators") {
  CHECK(param_error("take", {{"mode", "wrapp"}}) ==
        "layer: parameter 'mode': 'wrapp' is not one of {'clip', 'raise', 'wrap'} (did you mean "
        "'wrap'?)");
  CHECK(param_error("slice", {{"begin", "(0, 1)"}, {"end", "(1,)"}}) ==
        "layer: begin (0, 1) and end (1,) must have the same length");
  CHECK(param_error("slice", {{"begin", "(0,)"}, {"end", "(1,)"}, {"step", "(0,)"}}) ==
        "layer: step (0,) has a 0");
  CHECK(param_error("slice", {{"begin", "(0, x)"}, {"end", "(1, 2)"}}) ==
        "layer: parameter 'begin': cannot parse integer tuple '(0, x)': element 'x' is neither "
        "an integer nor None");
  CHECK(param_error("tile", {{"reps", "(0, 2)"}}) ==
        "layer: reps (0, 2) must be positive integers");
  CHECK(param_error("repeat", {{"repeats", "-1"}}) ==
        "layer: parameter 'repeats': -1 is out of range; allowed [0, inf)");
  CHECK(param_error("broadcast_axis", {{"axis", "(0, 2)"}, {"size", "(3,)"}}) ==
        "layer: axis (0, 2) and size (3,) must have the same length");
  CHECK(param_error("_arange", {{"start", "0"}, {"step", "0"}}) == "layer: step must not be 0");
  CHECK(param_error("_arange", {{"start", "0"}, {"repeat", "0"}}) ==
        "layer: repeat must be positive, not 0");
  CHECK(param_error("_zeros", {{"dtype", "bool"}}) ==
        "layer: parameter 'dtype': unknown dtype 'bool' (expected float32, float64, float16, "
        "uint8, int32, int8, int64 or bfloat16)");
  CHECK(param_error("topk", {{"ret_typ", "values"}}) ==
        "layer: parameter 'ret_typ': 'values' is not one of {'both', 'indices', 'mask', 'value'} "
        "(did you mean 'value'?)");
  CHECK(param_error("topk", {{"dtype", "int8"}}) ==
        "layer: parameter 'dtype': int8 cannot hold indices; use float16, float32, float64, "
        "int32, int64 or uint8");
  CHECK(param_error("norm", {{"ord", "3"}}) ==
        "layer: ord 3 is not supported; norm takes ord=1 or 2");
  CHECK(param_error("stack", {}) ==
        "layer: required parameter 'num_args' (int) is missing: Number of inputs to stack.");
  // MXNet's spellings parse and print back.
  CHECK(OpInstance("slice", {{"begin", "(None, -1)"}, {"end", "(2, None)"}}).attrs().at("begin") ==
        "(None, -1)");
  CHECK(OpInstance("topk", {}).attrs().at("axis") == "-1");
  CHECK(OpInstance("topk", {{"axis", "None"}}).attrs().at("axis") == "None");
  CHECK(OpInstance("squeeze", {}).attrs().at("axis") == "None");
}

TEST_CASE("the sequence tensor operators are registered with MXNet's names and aliases") {
  const auto& r = op::OpRegistry::get();
  const std::vector<std::pair<std::string, std::string>> names = {
      {"take", "take"},
      {"where", "where"},
      {"stack", "stack"},
      {"SwapAxis", "SwapAxis"},
      {"swapaxes", "SwapAxis"},
      {"squeeze", "squeeze"},
      {"slice", "slice"},
      {"crop", "slice"},
      {"tile", "tile"},
      {"repeat", "repeat"},
      {"broadcast_to", "broadcast_to"},
      {"broadcast_like", "broadcast_like"},
      {"broadcast_axis", "broadcast_axis"},
      {"broadcast_axes", "broadcast_axis"},
      {"_arange", "_arange"},
      {"arange", "_arange"},
      {"_contrib_arange_like", "_contrib_arange_like"},
      {"gather_nd", "gather_nd"},
      {"erf", "erf"},
      {"topk", "topk"},
      {"norm", "norm"},
      {"_zeros", "_zeros"},
      {"_ones", "_ones"}};
  for (const auto& [name, registered] : names) {
    CAPTURE(name);
    const op::OpDef* def = r.lookup(name);
    REQUIRE(def != nullptr);
    CHECK(def->name == registered);
    CHECK(!def->description.empty());
  }
  CHECK(r.find("take").input_names(r.find("take").parse({}, "take")) ==
        std::vector<std::string>{"a", "indices"});
  CHECK(r.find("where").input_names(nullptr) == std::vector<std::string>{"condition", "x", "y"});
}

#include "op/nn/rnn_cpu_steps.h"

#include <vector>

#include "op/vmath/vmath.h"

namespace mx::op::rnn {
namespace {

void lstm_row(const StepForward<float>& s, int64_t n, float* scratch) {
  const int64_t H = s.H, k0 = n * H;
  if (!active(s.lengths, n, s.t)) {
    for (int64_t j = 0; j < H; ++j) {
      s.c[k0 + j] = s.c_prev[k0 + j];
      s.h[k0 + j] = 0.0f;
    }
    return;
  }
  float* g = s.gates + n * s.gate_width;
  const float* r = s.hh + n * 4 * H;
  for (int64_t k = 0; k < 4 * H; ++k) g[k] += s.bx[k] + r[k] + s.bh[k];
  vmath::sigmoid(g, g, 2 * H);  // i, f
  vmath::tanh(g + 2 * H, g + 2 * H, H);
  vmath::sigmoid(g + 3 * H, g + 3 * H, H);
  const float *i = g, *f = g + H, *u = g + 2 * H, *o = g + 3 * H;
  float* c = s.c + k0;
  const float* c_prev = s.c_prev + k0;
  for (int64_t j = 0; j < H; ++j) c[j] = f[j] * c_prev[j] + i[j] * u[j];
  if (s.clip.on)
    for (int64_t j = 0; j < H; ++j) c[j] = s.clip.apply(c[j]);
  vmath::tanh(c, scratch, H);
  for (int64_t j = 0; j < H; ++j) s.h[k0 + j] = o[j] * scratch[j];
}

void gru_row(const StepForward<float>& s, int64_t n) {
  const int64_t H = s.H, k0 = n * H;
  float* g = s.gates + n * s.gate_width;
  const float* r = s.hh + n * 3 * H;
  for (int64_t k = 0; k < 2 * H; ++k) g[k] += s.bx[k] + r[k] + s.bh[k];
  vmath::sigmoid(g, g, 2 * H);  // r, z
  float* cand = g + 2 * H;
  float* hn = g + 3 * H;
  for (int64_t j = 0; j < H; ++j) {
    hn[j] = r[2 * H + j] + s.bh[2 * H + j];
    cand[j] += s.bx[2 * H + j] + g[j] * hn[j];
  }
  vmath::tanh(cand, cand, H);
  const float* z = g + H;
  const float* h_prev = s.c_prev + k0;  // GRU: the previous state
  for (int64_t j = 0; j < H; ++j) s.h[k0 + j] = (1.0f - z[j]) * cand[j] + z[j] * h_prev[j];
}

void vanilla_row(const StepForward<float>& s, int64_t n) {
  const int64_t H = s.H;
  float* g = s.gates + n * s.gate_width;
  const float* r = s.hh + n * H;
  for (int64_t j = 0; j < H; ++j) g[j] += s.bx[j] + r[j] + s.bh[j];
  if (s.mode == RnnMode::kRnnTanh)
    vmath::tanh(g, g, H);
  else
    for (int64_t j = 0; j < H; ++j) g[j] = g[j] > 0.0f ? g[j] : 0.0f;
  for (int64_t j = 0; j < H; ++j) s.h[n * H + j] = g[j];
}

}  // namespace

void forward_rows(const StepForward<float>& s, int64_t begin, int64_t end) {
  std::vector<float> scratch(static_cast<size_t>(s.H));
  for (int64_t n = begin; n < end; ++n) {
    if (s.mode == RnnMode::kLstm)
      lstm_row(s, n, scratch.data());
    else if (s.mode == RnnMode::kGru)
      gru_row(s, n);
    else
      vanilla_row(s, n);
  }
}

void backward_rows(const StepBackward<float>& s, int64_t begin, int64_t end) {
  const int64_t H = s.H;
  std::vector<float> tc(static_cast<size_t>(H));
  for (int64_t n = begin; n < end; ++n) {
    if (s.mode != RnnMode::kLstm || !active(s.lengths, n, s.t)) {
      for (int64_t j = 0; j < H; ++j) s(n, j);  // the functor (cheap without transcendentals)
      continue;
    }
    const int64_t k0 = n * H;
    const float* g = s.gates + n * s.gate_width;
    const float *i = g, *f = g + H, *u = g + 2 * H, *o = g + 3 * H;
    const float* c = s.c + k0;
    const float* c_prev = s.c_prev + k0;
    const float* dh = s.dh + k0;
    float* dc = s.dc + k0;
    float* gx = s.dgx + n * 4 * H;
    vmath::tanh(c, tc.data(), H);
    for (int64_t j = 0; j < H; ++j) {
      const float t = tc[j];
      float dcell = dc[j] + dh[j] * o[j] * (1.0f - t * t);
      if (s.clip.on) dcell *= s.clip.pass(c[j]);
      gx[j] = dcell * u[j] * i[j] * (1.0f - i[j]);
      gx[H + j] = dcell * c_prev[j] * f[j] * (1.0f - f[j]);
      gx[2 * H + j] = dcell * i[j] * (1.0f - u[j] * u[j]);
      gx[3 * H + j] = dh[j] * t * o[j] * (1.0f - o[j]);
      dc[j] = dcell * f[j];
    }
  }
}

}  // namespace mx::op::rnn

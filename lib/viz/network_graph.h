// A network as a picture, like MXNet's mx.viz.plot_network: one box per
// layer with its operator, key parameters and output shape, the data inputs
// as ovals, edges labelled with the shapes they carry, and the layers whose
// names share a prefix (a YAML block's instance, a Gluon stage) drawn as
// nested clusters. Written as Graphviz dot text (graph_render.h lays it out).
#pragma once

#include <map>
#include <set>
#include <string>

#include "graph/symbol.h"

namespace mx::viz {

struct NetworkPicture {
  std::string title;
  // The inputs shown (the data and label); every other variable is a
  // parameter or auxiliary state and is left out, as plot_network does.
  std::set<std::string> inputs;
  // Known input shapes; the others are inferred where possible.
  graph::ShapeMap shapes;
};

// The dot text of `symbol`.
std::string network_dot(const graph::Symbol& symbol, const NetworkPicture& picture);

// The key parameters of a layer in a few words ("5x5/2, 64 filters").
std::string layer_summary(const std::string& op, const std::map<std::string, std::string>& params);

}  // namespace mx::viz

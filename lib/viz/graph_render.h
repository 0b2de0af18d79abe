// Lays out and draws dot text with Graphviz (its C library, the `dot`
// layout) as SVG or PNG; .dot writes the text itself. Atomic like every
// picture: a temporary name, then a rename.
#pragma once

#include <string>

namespace mx::viz {

// Whether this build lays out graphs (it was built with Graphviz).
bool graphs_available();

// Writes `dot` to `path` as .dot, .svg or .png (by the extension); an
// InputError for another extension, an Error when the build has no
// Graphviz (for .svg/.png) or Graphviz fails.
void render_dot(const std::string& dot, const std::string& path);

}  // namespace mx::viz

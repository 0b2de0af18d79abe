#include "viz/graph_render.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "base/error.h"
#include "base/file_util.h"
#include "viz/chart_render.h"

#ifdef MX_HAVE_GRAPHVIZ
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#endif

namespace mx::viz {

#ifdef MX_HAVE_GRAPHVIZ

bool graphs_available() { return true; }

namespace {

struct GvcDeleter {
  void operator()(GVC_t* gvc) const { gvFreeContext(gvc); }
};

void layout_and_render(const std::string& dot, const std::string& format, const std::string& path) {
  // Graphviz keeps its errors for aglasterr instead of printing them: the
  // message names the file.
  agseterr(AGMAX);
  auto reason = [] {
    const char* last = aglasterr();
    std::string text = last != nullptr ? last : "";
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text.empty() ? std::string() : ": " + text;
  };
  std::unique_ptr<GVC_t, GvcDeleter> gvc(gvContext());
  if (!gvc) throw Error("cannot draw '" + path + "': Graphviz did not start");
  Agraph_t* g = agmemread(dot.c_str());
  if (g == nullptr)
    throw Error("cannot draw '" + path + "': Graphviz could not read the graph" + reason());
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  int rc = gvLayout(gvc.get(), g, "dot");
  if (rc == 0) rc = gvRenderFilename(gvc.get(), g, format.c_str(), temp.c_str());
  gvFreeLayout(gvc.get(), g);
  agclose(g);
  if (rc != 0) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw Error("cannot draw '" + path + "': Graphviz could not lay out or render it as " + format +
                reason() + " (is the graphviz package with its plugins installed?)");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw Error("cannot rename '" + temp + "' to '" + path + "'");
  }
}

}  // namespace

#else

bool graphs_available() { return false; }

#endif

void render_dot(const std::string& dot, const std::string& path) {
  const ImageFormat format = image_format(path, "graph", true);
  if (format == ImageFormat::kDot) {
    write_file_atomically(path, [&](std::ostream& out) { out << dot; });
    return;
  }
#ifdef MX_HAVE_GRAPHVIZ
  layout_and_render(dot, format == ImageFormat::kPng ? "png" : "svg", path);
#else
  throw Error("cannot draw '" + path +
              "': mx was built without Graphviz (install libgraphviz-dev and rebuild), "
              "write .dot instead");
#endif
}

}  // namespace mx::viz

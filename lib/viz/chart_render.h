// Draws a chart (chart.h) with Cairo, as PNG or SVG by the file's
// extension, from one drawing routine. Files are written under a temporary
// name and renamed, so a reader never sees half a picture.
#pragma once

#include <string>

#include "viz/chart.h"

namespace mx::viz {

enum class ImageFormat { kPng, kSvg, kDot };

// The format `path`'s extension names among `allowed` (".png", ".svg",
// ".dot"); an InputError listing them otherwise.
ImageFormat image_format(const std::string& path, const std::string& what, bool allow_dot);

// Whether this build draws charts (it was built with Cairo).
bool charts_available();

// Writes `chart` to `path` (.png or .svg). An Error when the build has no
// Cairo or the file cannot be written.
void render_chart(const Chart& chart, const std::string& path);

}  // namespace mx::viz

#include "io/pack_sources.h"

#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "io/csv_table.h"
#include "io/idx_file.h"
#include "io/image_list.h"
#include "io/recordio_errors.h"

namespace fs = std::filesystem;

namespace mx {
namespace {

std::vector<std::string> parse_exts(const std::string& text) {
  std::vector<std::string> exts;
  for (auto& e : split(text, ',')) {
    std::string ext = trim(e);
    if (ext.empty()) continue;
    if (ext[0] != '.') ext = "." + ext;
    exts.push_back(ext);
  }
  if (exts.empty()) throw InputError("--exts lists no extension");
  return exts;
}

// MNIST's naming: train-images-idx3-ubyte goes with train-labels-idx1-ubyte.
std::string default_labels_path(const std::string& images) {
  std::string path = images;
  const size_t at = path.find("images-idx3");
  if (at == std::string::npos) return "";
  path.replace(at, 11, "labels-idx1");
  std::error_code ec;
  return fs::exists(path, ec) ? path : "";
}

void open_folder(const PackSourceOptions& o, PackSource& s) {
  ImageListOptions options;
  options.recursive = o.recursive;
  options.exts = parse_exts(o.exts);
  auto list = list_images(o.path, options);
  s.entries = std::move(list.entries);
  s.classes = std::move(list.classes);
  s.images = std::make_unique<FolderSource>(o.path);
  s.made_list = true;
  if (s.entries.empty())
    throw InputError("no images with extensions " + o.exts + " in '" + o.path + "'" +
                     (o.recursive ? "" : " (without --recursive only its own files count)"));
}

void open_lst(const PackSourceOptions& o, PackSource& s) {
  s.entries = with_recordio_errors([&] { return recordio::read_list(o.path); });
  const std::string root = o.root.empty() ? fs::path(o.path).parent_path().string() : o.root;
  s.images = std::make_unique<FolderSource>(root.empty() ? "." : root);
}

// The images and the labels must hold the same number of items.
void open_idx(const PackSourceOptions& o, PackSource& s) {
  const std::string labels = o.labels.empty() ? default_labels_path(o.path) : o.labels;
  if (labels.empty()) throw InputError("no label file for '" + o.path + "': give it with --labels");
  IdxArray images = read_idx(o.path, o.limit);
  IdxArray label_array = read_idx(labels, o.limit);
  if (label_array.dims.size() != 1 || label_array.items() != images.items())
    throw InputError(str(labels, ": ", label_array.items(), " labels for ", images.items(),
                         " images in ", o.path));
  for (int64_t i = 0; i < images.items(); ++i)
    s.entries.push_back({i, {static_cast<float>(label_array.data[static_cast<size_t>(i)])}, ""});
  s.images = std::make_unique<IdxSource>(o.path, std::move(images));
}

struct ImageDims {
  int channels = 1, height = 0, width = 0;
};

// The image shape of `pixels` columns: --shape, or a square gray image.
ImageDims csv_image_dims(const PackSourceOptions& o, int64_t pixels) {
  ImageDims d;
  if (o.shape.empty()) {
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(pixels))));
    if (side * side != pixels)
      throw InputError(str(o.path, ": ", pixels,
                           " pixel columns are not a square image; give --shape H,W or C,H,W"));
    d.height = d.width = static_cast<int>(side);
    return d;
  }
  std::vector<int> dims;
  for (auto& text : split(o.shape, ',')) dims.push_back(std::stoi(trim(text)));
  if (dims.size() == 2) {
    d.height = dims[0];
    d.width = dims[1];
  } else if (dims.size() == 3 && (dims[0] == 1 || dims[0] == 3)) {
    d.channels = dims[0];
    d.height = dims[1];
    d.width = dims[2];
  } else {
    throw InputError("--shape '" + o.shape + "' is not H,W or C,H,W with C 1 or 3");
  }
  return d;
}

void open_csv(const PackSourceOptions& o, PackSource& s) {
  CsvOptions options;
  options.header = o.csv_header == "yes" || (o.csv_header == "auto" && csv_has_header(o.path));
  options.max_rows = o.limit;
  CsvTable table = read_csv(o.path, options);
  if (table.rows == 0) throw InputError("'" + o.path + "' has no rows");
  const int64_t pixels = table.cols - o.label_width;
  if (pixels <= 0)
    throw InputError(str(o.path, ": ", table.cols, " columns leave no pixels after ", o.label_width,
                         " label column(s)"));
  const ImageDims dims = csv_image_dims(o, pixels);
  for (int64_t r = 0; r < table.rows; ++r) {
    recordio::ListEntry e{r, {}, ""};
    for (int k = 0; k < o.label_width; ++k) e.labels.push_back(table.row(r)[k]);
    s.entries.push_back(std::move(e));
  }
  s.several_labels = o.label_width > 1;
  s.images = std::make_unique<CsvSource>(o.path, std::move(table), o.label_width, dims.channels,
                                         dims.height, dims.width);
}

}  // namespace

std::string detect_pack_format(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "folder";
  file_size(path);  // a clear error when it does not exist
  std::string name = to_lower(fs::path(path).filename().string());
  if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") name.resize(name.size() - 3);
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".lst")) return "lst";
  if (ends_with(".csv")) return "csv";
  if (name.find("idx") != std::string::npos || ends_with("ubyte")) return "idx";
  throw InputError("cannot tell what '" + path +
                   "' is (a folder, a .lst, an IDX file or a .csv); say it with --format");
}

PackSource open_pack_source(const PackSourceOptions& options) {
  PackSource s;
  s.format = options.format == "auto" ? detect_pack_format(options.path) : options.format;
  if (s.format == "folder")
    open_folder(options, s);
  else if (s.format == "lst")
    open_lst(options, s);
  else if (s.format == "idx")
    open_idx(options, s);
  else if (s.format == "csv")
    open_csv(options, s);
  else
    throw InputError("--format '" + s.format + "' is not auto, folder, lst, idx or csv");
  if (options.limit >= 0 && static_cast<int64_t>(s.entries.size()) > options.limit)
    s.entries.resize(static_cast<size_t>(options.limit));
  return s;
}

}  // namespace mx

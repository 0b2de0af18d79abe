#include "io/image_list.h"

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "base/strings.h"
#include "io/python_random.h"

namespace mx {
namespace fs = std::filesystem;
namespace {

// os.path.splitext(name)[1].lower(): leading dots do not start an extension.
std::string extension_of(const std::string& name) {
  const size_t start = name.find_first_not_of('.');
  if (start == std::string::npos) return "";
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot < start) return "";
  return to_lower(name.substr(dot));
}

std::string relative_text(const fs::path& path, const fs::path& root) {
  std::string rel = path.lexically_relative(root).generic_string();
  return rel.empty() ? "." : rel;
}

struct Walker {
  const ImageListOptions& options;
  const fs::path root;
  ImageList list;
  std::vector<std::string> dirs_seen;  // followed links could loop

  bool wanted(const std::string& name) const {
    const std::string ext = extension_of(name);
    return std::find_if(options.exts.begin(), options.exts.end(), [&](const std::string& e) {
             return to_lower(e) == ext;
           }) != options.exts.end();
  }

  void walk(const fs::path& dir) {
    std::error_code ec;
    const fs::path canonical = fs::canonical(dir, ec);
    if (!ec) {
      if (std::find(dirs_seen.begin(), dirs_seen.end(), canonical.string()) != dirs_seen.end())
        return;
      dirs_seen.push_back(canonical.string());
    }
    std::vector<std::string> dirs, files;
    fs::directory_iterator it(dir, ec);
    if (ec) throw InputError("cannot list folder '" + dir.string() + "': " + ec.message());
    for (const auto& entry : it) {
      const std::string name = entry.path().filename().string();
      std::error_code type_ec;
      if (entry.is_directory(type_ec))
        dirs.push_back(name);
      else
        files.push_back(name);
    }
    std::sort(dirs.begin(), dirs.end());
    std::sort(files.begin(), files.end());
    int label = -1;
    for (const auto& name : files) {
      std::error_code type_ec;
      if (!wanted(name) || !fs::is_regular_file(dir / name, type_ec)) continue;
      if (label < 0) {
        label = static_cast<int>(list.classes.size());
        list.classes.push_back(relative_text(dir, root));
      }
      recordio::ListEntry entry;
      entry.index = static_cast<int64_t>(list.entries.size());
      entry.labels = {static_cast<float>(options.recursive ? label : 0)};
      entry.path = relative_text(dir / name, root);
      list.entries.push_back(std::move(entry));
    }
    if (options.recursive)
      for (const auto& name : dirs) walk(dir / name);
  }
};

}  // namespace

ImageList list_images(const std::string& root, const ImageListOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw InputError("'" + root + "' is not a folder");
  Walker walker{options, fs::path(root), {}, {}};
  walker.walk(fs::path(root));
  if (!options.recursive && !walker.list.classes.empty()) walker.list.classes = {"."};
  return std::move(walker.list);
}

std::vector<Split> make_splits(std::vector<recordio::ListEntry> entries,
                               const SplitOptions& options) {
  const auto ratio_ok = [](double r) { return r >= 0.0 && r <= 1.0; };
  if (!ratio_ok(options.train_ratio) || !ratio_ok(options.test_ratio))
    throw InputError("train and test ratios must lie in [0, 1]");
  if (options.train_ratio + options.test_ratio > 1.0 + 1e-9)
    throw InputError(str("train ratio ", options.train_ratio, " + test ratio ", options.test_ratio,
                         " exceed 1"));
  if (options.chunks < 1) throw InputError("chunks must be at least 1");
  if (options.shuffle) PythonRandom(options.seed).shuffle(entries);

  // im2rec's make_list, including its use of the full chunk size for the
  // cut points of every chunk.
  const size_t n = entries.size();
  const size_t chunks = static_cast<size_t>(options.chunks);
  const size_t chunk_size = (n + chunks - 1) / chunks;
  const auto slice = [&](size_t begin, size_t end) {
    begin = std::min(begin, n);
    end = std::min(std::max(end, begin), n);
    return std::vector<recordio::ListEntry>(entries.begin() + static_cast<std::ptrdiff_t>(begin),
                                            entries.begin() + static_cast<std::ptrdiff_t>(end));
  };
  std::vector<Split> splits;
  for (size_t i = 0; i < chunks; ++i) {
    const size_t begin = i * chunk_size;
    const auto chunk = slice(begin, begin + chunk_size);
    const std::string prefix = chunks > 1 ? "_" + std::to_string(i) : "";
    const size_t sep = static_cast<size_t>(static_cast<double>(chunk_size) * options.train_ratio);
    const size_t sep_test =
        static_cast<size_t>(static_cast<double>(chunk_size) * options.test_ratio);
    const auto part = [&](size_t b, size_t e) {
      b = std::min(b, chunk.size());
      e = std::min(std::max(e, b), chunk.size());
      return std::vector<recordio::ListEntry>(chunk.begin() + static_cast<std::ptrdiff_t>(b),
                                              chunk.begin() + static_cast<std::ptrdiff_t>(e));
    };
    if (options.train_ratio == 1.0) {
      splits.push_back({prefix, chunk});
      continue;
    }
    if (options.test_ratio != 0.0) splits.push_back({prefix + "_test", part(0, sep_test)});
    if (options.train_ratio + options.test_ratio < 1.0)
      splits.push_back({prefix + "_val", part(sep_test + sep, chunk.size())});
    splits.push_back({prefix + "_train", part(sep_test, sep_test + sep)});
  }
  return splits;
}

}  // namespace mx

// Data iterators, augmentation and packing: against the im2rec fixtures made
// by MXNet 1.9.1, Debian's Fashion-MNIST files, and damaged inputs.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "io/csv_iter.h"
#include "io/data_iter_factory.h"
#include "io/epoch_order.h"
#include "io/idx_file.h"
#include "io/image_augmenter.h"
#include "io/image_list.h"
#include "io/image_probe.h"
#include "io/image_record_iter.h"
#include "io/mnist_iter.h"
#include "io/ordered_pipeline.h"
#include "io/pack.h"
#include "io/python_random.h"
#include "io/rec_inspect.h"
#include "io/synthetic_iter.h"
#include "ndarray/params_io.h"
#include "recordio/image_record.h"
#include "recordio/indexed_writer.h"
#include "recordio/list_file.h"
#include "recordio/reader.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace mx;
namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(MX_FIXTURES_DIR) + "/recordio/";
const std::string kFashion = "/usr/share/datasets/fashion-mnist/";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

using mx::test::TempDir;

// The records of a .rec file, in order.
std::vector<std::string> payloads_of(const std::string& path) {
  recordio::Reader reader(path);
  recordio::Record r;
  std::vector<std::string> out;
  while (reader.next(r)) out.emplace_back(r.payload);
  return out;
}

cv::Mat decode_image(std::string_view bytes, int flag = cv::IMREAD_UNCHANGED) {
  return cv::imdecode(cv::Mat(1, int(bytes.size()), CV_8U, const_cast<char*>(bytes.data())), flag);
}

// Reference augmentation, written plainly: center crop of (h, w), RGB CHW,
// (pixel - mean) / std * scale, optionally mirrored.
std::vector<float> reference(const cv::Mat& bgr, int h, int w, bool mirror, const float mean[3],
                             const float stdv[3], float scale) {
  const int y0 = (bgr.rows - h) / 2, x0 = (bgr.cols - w) / 2;
  std::vector<float> out(size_t(3 * h * w));
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int sx = mirror ? x0 + w - 1 - x : x0 + x;
        const float p = bgr.at<cv::Vec3b>(y0 + y, sx)[2 - c];
        out[size_t((c * h + y) * w + x)] = (p - mean[c]) / stdv[c] * scale;
      }
  return out;
}

ImageRecordIterParam record_param(const std::string& rec, const std::string& extra = "") {
  std::map<std::string, std::string> values{{"path_imgrec", rec},
                                            {"data_shape", "(3, 8, 8)"},
                                            {"batch_size", "4"},
                                            {"preprocess_threads", "2"}};
  std::istringstream in(extra);
  std::string kv;
  while (in >> kv) values[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  return ImageRecordIterParam::from_strings(values, "test");
}

// Every example id of an epoch, skipping padding.
std::vector<uint64_t> epoch_ids(DataIter& iter) {
  std::vector<uint64_t> ids;
  while (auto batch = iter.next()) {
    const size_t real = batch->index.size() - size_t(batch->pad);
    ids.insert(ids.end(), batch->index.begin(), batch->index.begin() + long(real));
  }
  return ids;
}

// Writes an image .rec of `count` PNG images (id i, label i % 5, 10x12).
void write_image_rec(const std::string& rec, const std::string& idx, int count) {
  recordio::IndexedWriter writer(rec, idx);
  for (int i = 0; i < count; ++i) {
    cv::Mat image(10, 12, CV_8UC3, cv::Scalar(i % 256, (3 * i) % 256, 40));
    std::vector<uchar> png;
    cv::imencode(".png", image, png);
    writer.write(i, recordio::pack_image_record(
                        {0, float(i % 5), uint64_t(i), 0}, {},
                        std::string_view(reinterpret_cast<const char*>(png.data()), png.size())));
  }
  writer.commit();
}

// Writes an image .rec of `count` BMP images (id i, label i % 5), h x w, whose
// pixels vary across the image (so crops and mirrors differ). BMP is not
// compressed: every record has the same size, so byte-range shards of a
// number of parts that divides `count` end exactly on record starts.
void write_bmp_rec(const std::string& rec, const std::string& idx, int count, int h, int w) {
  recordio::IndexedWriter writer(rec, idx);
  for (int i = 0; i < count; ++i) {
    cv::Mat image(h, w, CV_8UC3);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        image.at<cv::Vec3b>(y, x) = cv::Vec3b(uchar((x * 13 + i) % 256), uchar((y * 29) % 256),
                                              uchar((x * y + 3 * i) % 256));
    std::vector<uchar> bmp;
    cv::imencode(".bmp", image, bmp);
    writer.write(i, recordio::pack_image_record(
                        {0, float(i % 5), uint64_t(i), 0}, {},
                        std::string_view(reinterpret_cast<const char*>(bmp.data()), bmp.size())));
  }
  writer.commit();
}

}  // namespace

TEST_CASE("Python's random.shuffle, as im2rec uses it") {
  // Values printed by CPython 3.11: random.seed(S); x = list(range(N)); random.shuffle(x)
  const auto shuffled = [](uint64_t seed, int n) {
    std::vector<int> x(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) x[size_t(i)] = i;
    PythonRandom(seed).shuffle(x);
    return x;
  };
  CHECK(shuffled(100, 20) ==
        std::vector<int>{7, 15, 19, 0, 2, 3, 13, 9, 10, 17, 1, 8, 6, 16, 11, 12, 5, 18, 14, 4});
  CHECK(shuffled(0, 7) == std::vector<int>{4, 2, 1, 0, 5, 3, 6});
  CHECK(shuffled((uint64_t{1} << 40) + 5, 10) == std::vector<int>{1, 2, 3, 6, 7, 0, 5, 4, 9, 8});
  PythonRandom r(100);
  CHECK(r.getrandbits(32) == 625644691u);
  CHECK(r.getrandbits(32) == 1973661107u);
}

TEST_CASE("listing a class folder gives im2rec's .lst files, splits included") {
  ImageList list = list_images(kDir + "images", {});
  CHECK(list.classes == std::vector<std::string>{"cat", "dog"});
  REQUIRE(list.entries.size() == 6);            // notes.txt is not an image
  CHECK(list.entries[4].path == "dog/d2.JPG");  // extensions match in any case
  const auto check_same = [](const std::vector<recordio::ListEntry>& got, const std::string& file) {
    std::ostringstream out;
    recordio::write_list(out, got);
    CHECK(out.str() == read_bytes(kDir + file));
  };
  auto whole = make_splits(list.entries, {});
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].suffix == "");
  check_same(whole[0].entries, "im2rec.lst");
  SplitOptions ratios;
  ratios.train_ratio = 0.5;
  ratios.test_ratio = 0.25;
  auto parts = make_splits(list.entries, ratios);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].suffix == "_test");
  CHECK(parts[1].suffix == "_val");
  CHECK(parts[2].suffix == "_train");
  check_same(parts[0].entries, "im2rec_split_test.lst");
  check_same(parts[1].entries, "im2rec_split_val.lst");
  check_same(parts[2].entries, "im2rec_split_train.lst");
  SplitOptions chunks;
  chunks.chunks = 4;
  chunks.shuffle = false;
  auto c = make_splits(list.entries, chunks);
  REQUIRE(c.size() == 4);
  CHECK(c[3].suffix == "_3");
  CHECK(c[0].entries.size() == 2);
  CHECK(c[3].entries.empty());  // chunk size 2: 2, 2, 2, 0 as im2rec cuts
  ImageListOptions flat;
  flat.recursive = false;
  CHECK(list_images(kDir + "images", flat).entries.empty());  // only the root's own files
  SplitOptions bad;
  bad.train_ratio = 0.8;
  bad.test_ratio = 0.5;
  CHECK_THROWS_AS(make_splits(list.entries, bad), InputError);
}

TEST_CASE("packing from a .lst matches im2rec: pass-through bytes, decoded pixels") {
  auto entries = recordio::read_list(kDir + "im2rec.lst");
  FolderSource source(kDir + "images");
  const auto pass = payloads_of(kDir + "im2rec_pass.rec");
  const auto png = payloads_of(kDir + "im2rec_png.rec");
  const auto jpg = payloads_of(kDir + "im2rec.rec");
  REQUIRE(pass.size() == entries.size());
  EncodeOptions pass_options;
  pass_options.pass_through = true;
  EncodeOptions png_options;
  png_options.center_crop = true;
  png_options.resize = 12;
  png_options.encoding = ".png";
  png_options.quality = 9;
  EncodeOptions jpg_options;
  for (size_t i = 0; i < entries.size(); ++i) {
    CAPTURE(entries[i].path);
    CHECK(encode_entry(source, entries[i], pass_options) == pass[i]);
    // PNG is lossless: the pixels must be im2rec's exactly.
    const std::string our_png = encode_entry(source, entries[i], png_options);
    auto ours = recordio::parse_image_record(our_png, "", 0);
    auto theirs = recordio::parse_image_record(png[i], "", 0);
    CHECK(ours.header.id == theirs.header.id);
    CHECK(ours.label(0) == theirs.label(0));
    cv::Mat a = decode_image(ours.image), b = decode_image(theirs.image);
    REQUIRE(a.size() == b.size());
    CHECK(cv::norm(a, b, cv::NORM_INF) == 0);
    // JPEG: same size, nearly the same pixels.
    const std::string our_jpg = encode_entry(source, entries[i], jpg_options);
    auto j = recordio::parse_image_record(our_jpg, "", 0);
    cv::Mat c = decode_image(j.image),
            d = decode_image(recordio::parse_image_record(jpg[i], "", 0).image);
    REQUIRE(c.size() == d.size());
    CHECK(cv::norm(c, d, cv::NORM_L1) / double(c.total() * c.channels()) < 1.0);
  }
}

TEST_CASE("pack_records: atomic outputs, unreadable images skipped or fatal") {
  TempDir dir;
  auto entries = recordio::read_list(kDir + "im2rec.lst");
  FolderSource source(kDir + "images");
  EncodeOptions pass;
  pass.pass_through = true;
  PackOptions options;
  options.threads = 3;
  auto result = pack_records(source, entries, pass, dir.file("a.rec"), dir.file("a.idx"), options);
  CHECK(result.packed.size() == 6);
  CHECK(read_bytes(dir.file("a.rec")) == read_bytes(kDir + "im2rec_pass.rec"));
  CHECK(read_bytes(dir.file("a.idx")) == read_bytes(kDir + "im2rec_pass.idx"));

  // An empty image file, and one whose reads fail: each says which.
  {
    write_bytes(dir.file("empty.jpg"), "");
    FolderSource folder(dir.path());
    std::string bytes;
    cv::Mat image;
    recordio::ListEntry entry;
    entry.path = "empty.jpg";
    CHECK_THROWS_WITH_AS(folder.load(entry, bytes, image),
                         (dir.file("empty.jpg") + ": the file is empty").c_str(), InputError);
    if (const auto unreadable = mx::test::unreadable_file()) {
      const fs::path p(*unreadable);
      FolderSource sys(p.parent_path().string());
      entry.path = p.filename().string();
      CHECK_THROWS_WITH_AS(sys.load(entry, bytes, image), (*unreadable + ": read error").c_str(),
                           InputError);
    } else {
      MESSAGE("skipped: this machine has no file whose reads fail");
    }
  }

  // A missing and a broken image.
  fs::copy(kDir + "images", dir.file("images"), fs::copy_options::recursive);
  write_bytes(dir.file("images/cat/c1.jpg"), "not a jpeg at all");
  fs::remove(dir.file("images/dog/d3.png"));
  FolderSource damaged(dir.file("images"));
  std::vector<std::string> reported;
  options.on_skip = [&](const std::string& what) { reported.push_back(what); };
  EncodeOptions encode;
  result = pack_records(damaged, entries, encode, dir.file("b.rec"), dir.file("b.idx"), options);
  CHECK(result.packed.size() == 4);
  REQUIRE(reported.size() == 2);
  CHECK(reported[0].find("d3.png: cannot open") != std::string::npos);
  CHECK(reported[1].find("c1.jpg: cannot decode the image (17 bytes, format unknown)") !=
        std::string::npos);
  CHECK(payloads_of(dir.file("b.rec")).size() == 4);

  options.strict = true;
  CHECK_THROWS_WITH_AS(
      pack_records(damaged, entries, encode, dir.file("c.rec"), dir.file("c.idx"), options),
      doctest::Contains("d3.png: cannot open"), InputError);
  CHECK_FALSE(fs::exists(dir.file("c.rec")));
  CHECK_FALSE(fs::exists(dir.file("c.idx")));
  for (const auto& e : fs::directory_iterator(dir.path()))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("image headers give format and size without decoding") {
  for (const auto& [path, w, h, c] : std::vector<std::tuple<std::string, int, int, int>>{
           {"cat/c1.jpg", 24, 20, 3}, {"cat/c2.png", 14, 18, 3}, {"cat/c3.jpeg", 16, 16, 1}}) {
    auto info = probe_image(read_bytes(kDir + "images/" + path));
    REQUIRE(info);
    CHECK(info->width == w);
    CHECK(info->height == h);
    CHECK(info->channels == c);
  }
  CHECK_FALSE(probe_image("not an image"));
  CHECK_FALSE(probe_image(std::string("\xff\xd8\xff", 3)));
  CHECK(guess_image_format(std::string("\x89PNG\r\n\x1a\n", 8)) == "png");
  CHECK(guess_image_format(std::string("II*\0", 4)) == "tiff");
  CHECK(guess_image_format(std::string("MM\0*", 4)) == "tiff");
  CHECK(guess_image_format(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)) == "webp");
  CHECK(guess_image_format("P6\n2 2\n255\n") == "pnm");
  // Bytes in no known format never reach OpenCV's decoders (fuzz_image_record:
  // a damaged DICOM payload asked OpenCV's DICOM reader for 2.3 GB).
  CHECK_FALSE(known_image_format(std::string("\0\0\0\0DICM", 8)));
  CHECK_FALSE(known_image_format(std::string("RIFF\x10\0\0\0WAVEfmt ", 16)));
  CHECK(known_image_format(std::string("\xff\xd8\xff", 3)));
  CHECK(guess_image_format("GIF89a") == "gif");
  CHECK_FALSE(known_image_format("GIF89a"));
}

TEST_CASE("augmentation: crop, mirror, normalize in RGB CHW order") {
  cv::Mat image(7, 9, CV_8UC3);
  cv::randu(image, 0, 256);
  ImageAugmentConfig config;
  config.height = 5;
  config.width = 4;
  const float mean[3] = {10, 20, 30}, stdv[3] = {2, 4, 8};
  std::copy(mean, mean + 3, config.mean);
  std::copy(stdv, stdv + 3, config.std);
  config.scale = 0.5f;
  ImageAugmenter center(config);
  std::vector<float> out(3 * 5 * 4);
  Rng rng(1);
  center.augment_into(image, rng, out.data());
  const auto expected = reference(image, 5, 4, false, mean, stdv, 0.5f);
  for (size_t i = 0; i < out.size(); ++i)
    CHECK(out[i] == doctest::Approx(expected[i]).epsilon(1e-6));

  config.rand_mirror = true;
  ImageAugmenter mirror(config);
  int mirrored = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Rng r(seed);
    mirror.augment_into(image, r, out.data());
    const auto flipped = reference(image, 5, 4, true, mean, stdv, 0.5f);
    if (out == flipped)
      ++mirrored;
    else
      CHECK(out == reference(image, 5, 4, false, mean, stdv, 0.5f));
  }
  CHECK(mirrored > 5);
  CHECK(mirrored < 35);

  // Random crops stay inside the image and depend only on the generator.
  ImageAugmentConfig crop;
  crop.height = crop.width = 3;
  crop.rand_crop = true;
  ImageAugmenter random_crop(crop);
  std::set<std::vector<float>> seen;
  std::vector<float> a(27), b(27);
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Rng r1(seed), r2(seed);
    random_crop.augment_into(image, r1, a.data());
    random_crop.augment_into(image, r2, b.data());
    CHECK(a == b);
    seen.insert(a);
  }
  CHECK(seen.size() > 10);

  // resize: the shorter side becomes `resize` (MXNet's rounding), then a
  // center crop; an image smaller than the crop is scaled up to cover it.
  ImageAugmentConfig resize;
  resize.height = resize.width = 14;
  resize.resize = 14;
  ImageAugmenter resizer(resize);
  std::vector<float> big(3 * 14 * 14);
  resizer.augment_into(image, rng, big.data());
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(9 * 14 / 7, 14));
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  CHECK(big == reference(resized, 14, 14, false, zero, one, 1));
  ImageAugmentConfig tiny;
  tiny.height = tiny.width = 30;
  ImageAugmenter upscale(tiny);
  std::vector<float> up(3 * 30 * 30);
  upscale.augment_into(image, rng, up.data());
  CHECK_FALSE(ImageAugmenter(tiny).decode_into("garbage", rng, up.data()));
}

TEST_CASE("ImageRecordIter reads im2rec's file: labels, ids, pixels, round_batch") {
  const auto list = recordio::read_list(kDir + "im2rec.lst");
  ImageRecordIter iter(record_param(kDir + "im2rec_png.rec", "mean_r=100 std_g=2 scale=0.5"));
  CHECK(iter.data_shape() == Shape{4, 3, 8, 8});
  CHECK(iter.label_shape() == Shape{4});
  const auto pngs = payloads_of(kDir + "im2rec_png.rec");
  std::vector<DataBatch> batches;
  while (auto b = iter.next()) batches.push_back(std::move(*b));
  REQUIRE(batches.size() == 2);
  CHECK(batches[0].pad == 0);
  CHECK(batches[1].pad == 2);
  const float mean[3] = {100, 0, 0}, stdv[3] = {1, 2, 1};
  for (size_t k = 0; k < 8; ++k) {
    const size_t record = k % 6;  // the last batch wraps around to the first records
    const DataBatch& b = batches[k / 4];
    const size_t slot = k % 4;
    CHECK(b.index[slot] == uint64_t(list[record].index));
    CHECK(b.label.to_vector<float>()[slot] == list[record].labels[0]);
    auto view = recordio::parse_image_record(pngs[record], "", 0);
    const auto expected =
        reference(decode_image(view.image, cv::IMREAD_COLOR), 8, 8, false, mean, stdv, 0.5f);
    const auto data = b.data.to_vector<float>();
    CHECK(std::vector<float>(data.begin() + long(slot * 192),
                             data.begin() + long(slot * 192 + 192)) == expected);
  }
  // round_batch off: the last batch is padded with zeros.
  ImageRecordIter plain(record_param(kDir + "im2rec_png.rec", "round_batch=0"));
  plain.next();
  auto last = plain.next();
  REQUIRE(last);
  CHECK(last->pad == 2);
  const auto data = last->data.to_vector<float>();
  for (size_t i = 2 * 192; i < 4 * 192; ++i) REQUIRE(data[i] == 0.0f);
  CHECK_FALSE(plain.next());
  plain.reset();
  CHECK(epoch_ids(plain).size() == 6);
}

TEST_CASE("ImageRecordIter gives what mx.io.ImageRecordIter of MXNet 1.9.1 gives") {
  // iter_batches.params: MXNet's batch of the six images of im2rec_png.rec.
  const NamedArrays expected = load_params(kDir + "iter_batches.params");
  for (const std::string name : {"plain", "resize"}) {
    CAPTURE(name);
    ImageRecordIter iter(record_param(kDir + "im2rec_png.rec",
                                      "batch_size=6 mean_r=100 std_g=2 scale=0.5" +
                                          std::string(name == "resize" ? " resize=10" : "")));
    auto batch = iter.next();
    REQUIRE(batch);
    CHECK(batch->label.to_vector<float>() == expected.get(name + "_label").to_vector<float>());
    const auto ours = batch->data.to_vector<float>();
    const auto theirs = expected.get(name + "_data").to_vector<float>();
    REQUIRE(ours.size() == theirs.size());
    // Identical, resizing included: both use OpenCV's bilinear resize with
    // the same rounding of the new size.
    float worst = 0;
    for (size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::abs(ours[i] - theirs[i]));
    CHECK(worst == 0.0f);
  }
}

TEST_CASE("ImageRecordIter: seeded shuffle per epoch, disjoint shards with and without .idx") {
  TempDir dir;
  write_image_rec(dir.file("d.rec"), dir.file("d.idx"), 50);
  const auto all = [] {
    std::vector<uint64_t> v(50);
    for (uint64_t i = 0; i < 50; ++i) v[i] = i;
    return v;
  }();
  for (const std::string& idx : std::vector<std::string>{"", dir.file("d.idx")}) {
    for (const std::string shuffle : {"0", "1"}) {
      CAPTURE(idx);
      CAPTURE(shuffle);
      std::vector<uint64_t> joined;
      for (int part = 0; part < 3; ++part) {
        ImageRecordIter iter(
            record_param(dir.file("d.rec"), "path_imgidx=" + idx + " shuffle=" + shuffle +
                                                " num_parts=3 part_index=" + std::to_string(part) +
                                                " round_batch=0"));
        auto ids = epoch_ids(iter);
        joined.insert(joined.end(), ids.begin(), ids.end());
      }
      std::sort(joined.begin(), joined.end());
      CHECK(joined == all);
    }
  }
  ImageRecordIter a(
      record_param(dir.file("d.rec"), "shuffle=1 seed=7 path_imgidx=" + dir.file("d.idx")));
  ImageRecordIter b(record_param(dir.file("d.rec"), "shuffle=1 seed=7"));  // index by scanning
  auto first = epoch_ids(a);
  CHECK(first == epoch_ids(b));
  CHECK(first != std::vector<uint64_t>(all.begin(), all.begin() + long(first.size())));
  a.reset();
  auto second = epoch_ids(a);
  CHECK(second != first);
  std::sort(second.begin(), second.end());
  CHECK(second == all);
}

TEST_CASE("ImageRecordIter: damaged, truncated and undecodable records") {
  TempDir dir;
  write_image_rec(dir.file("d.rec"), dir.file("d.idx"), 20);
  const std::string good = read_bytes(dir.file("d.rec"));
  std::vector<uint64_t> offsets;
  for (const auto& e : recordio::read_index(dir.file("d.idx"))) offsets.push_back(e.offset);

  // Framing damage at record 5.
  std::string bad = good;
  bad[offsets[5]] = 0;
  write_bytes(dir.file("bad.rec"), bad);
  {
    ImageRecordIter stop(record_param(dir.file("bad.rec")));
    stop.next();
    const std::string where = "bad.rec: byte " + std::to_string(offsets[5]);
    CHECK_THROWS_WITH_AS(stop.next(), doctest::Contains(where.c_str()), InputError);
    ImageRecordIter skip(record_param(dir.file("bad.rec"), "bad_record=skip round_batch=0"));
    auto ids = epoch_ids(skip);
    CHECK(ids.size() == 19);
    CHECK(std::find(ids.begin(), ids.end(), 5u) == ids.end());
    CHECK(skip.stats().damaged_regions == 1);
  }
  // Truncated in the middle of record 17.
  write_bytes(dir.file("cut.rec"), good.substr(0, offsets[17] + 20));
  {
    ImageRecordIter stop(record_param(dir.file("cut.rec"), "preprocess_threads=1"));
    std::string message;
    try {
      while (stop.next()) {
      }
    } catch (const InputError& e) {
      message = e.what();
    }
    CHECK(message.find("cut.rec: byte " + std::to_string(offsets[17])) != std::string::npos);
    CHECK(message.find("truncated") != std::string::npos);
  }
  // Record 9 holds bytes that are not an image.
  {
    recordio::IndexedWriter writer(dir.file("img.rec"), dir.file("img.idx"));
    const auto payloads = payloads_of(dir.file("d.rec"));
    for (size_t i = 0; i < payloads.size(); ++i)
      writer.write(int64_t(i), i == 9 ? recordio::pack_image_record({0, 4, 9, 0}, {}, "garbage!")
                                      : payloads[i]);
    writer.commit();
  }
  const uint64_t at9 = recordio::read_index(dir.file("img.idx"))[9].offset;
  ImageRecordIter stop(record_param(dir.file("img.rec")));
  stop.next();
  stop.next();
  const std::string where =
      "img.rec: byte " + std::to_string(at9) + ": record id 9: cannot decode the image (8 bytes";
  CHECK_THROWS_WITH_AS(stop.next(), doctest::Contains(where.c_str()), InputError);
  ImageRecordIter skip(record_param(dir.file("img.rec"), "bad_record=skip"));
  std::vector<DataBatch> batches;
  while (auto b = skip.next()) batches.push_back(std::move(*b));
  REQUIRE(batches.size() == 5);
  CHECK(skip.stats().bad_records == 1);
  // Slot 1 of batch 2 (record 9) holds a copy of record 10.
  const auto data = batches[2].data.to_vector<float>();
  CHECK(std::equal(data.begin() + 192, data.begin() + 384, data.begin() + 384));
  CHECK(batches[2].index[1] == 10);

  // label_width must match the records.
  ImageRecordIter wide(record_param(dir.file("d.rec"), "label_width=2"));
  CHECK_THROWS_WITH_AS(wide.next(), doctest::Contains("has 1 label(s), but label_width is 2"),
                       InputError);
  CHECK_THROWS_WITH_AS(ImageRecordIter(record_param(dir.file("none.rec"))),
                       doctest::Contains("none.rec: cannot open"), InputError);
  CHECK_THROWS_WITH_AS(
      record_param(dir.file("d.rec"), "rand_crops=1"),
      doctest::Contains("unknown parameter 'rand_crops' (did you mean 'rand_crop'?)"), InputError);
}

TEST_CASE("MNISTIter reads Debian's Fashion-MNIST .gz files") {
  MNISTIterParam p =
      MNISTIterParam::from_strings({{"image", kFashion + "t10k-images-idx3-ubyte.gz"},
                                    {"label", kFashion + "t10k-labels-idx1-ubyte.gz"},
                                    {"batch_size", "96"},
                                    {"shuffle", "0"},
                                    {"silent", "1"}},
                                   "test");
  MNISTIter iter(p);
  CHECK(iter.data_shape() == Shape{96, 1, 28, 28});
  const IdxArray images = read_idx(kFashion + "t10k-images-idx3-ubyte.gz", 2);
  const IdxArray labels = read_idx(kFashion + "t10k-labels-idx1-ubyte.gz");
  CHECK(images.dims == std::vector<int64_t>{2, 28, 28});
  auto first = iter.next();
  REQUIRE(first);
  const auto data = first->data.to_vector<float>();
  for (size_t i = 0; i < 784; ++i) REQUIRE(data[i] == images.data[i] / 256.0f);
  CHECK(first->label.to_vector<float>()[1] == labels.data[1]);
  std::map<float, int> histogram;
  size_t batches = 1, padded = 0;
  for (float l : first->label.to_vector<float>()) ++histogram[l];
  while (auto b = iter.next()) {
    ++batches;
    padded += size_t(b->pad);
    const auto l = b->label.to_vector<float>();
    for (size_t i = 0; i + size_t(b->pad) < l.size(); ++i) ++histogram[l[i]];
  }
  CHECK(batches == 105);  // 10000 / 96, rounded up
  CHECK(padded == 105 * 96 - 10000);
  CHECK(histogram.size() == 10);
  for (auto& [label, n] : histogram) CHECK(n == 1000);

  // Shards with a shuffle: disjoint, and together the whole set.
  p.shuffle = true;
  p.num_parts = 2;
  p.round_batch = false;
  std::set<uint64_t> seen;
  for (int part = 0; part < 2; ++part) {
    p.part_index = part;
    MNISTIter shard(p);
    CHECK(shard.examples() == 5000);
    for (uint64_t id : epoch_ids(shard)) CHECK(seen.insert(id).second);
  }
  CHECK(seen.size() == 10000);
}

TEST_CASE("IDX files: truncated, not IDX, other element types") {
  TempDir dir;
  const std::string header("\x00\x00\x08\x03\x00\x00\x00\x05\x00\x00\x00\x02\x00\x00\x00\x02", 16);
  write_bytes(dir.file("ok.idx"), header + std::string(20, '\x07'));
  CHECK(read_idx(dir.file("ok.idx")).data.size() == 20);
  CHECK(read_idx(dir.file("ok.idx"), 2).dims[0] == 2);
  // No items, but items of 2^31 x 2^31 values: the bound still holds (the
  // zero count once hid the item size, whose product overflowed).
  write_bytes(dir.file("huge.idx"),
              std::string("\x00\x00\x08\x03\x00\x00\x00\x00\x7f\xff\xff\xff\x7f\xff\xff\xff", 16));
  CHECK_THROWS_WITH_AS(read_idx(dir.file("huge.idx")),
                       doctest::Contains("the dimensions describe more than 2^36 values"),
                       InputError);
  write_bytes(dir.file("cut.idx"), header + std::string(13, '\x07'));
  CHECK_THROWS_WITH_AS(read_idx(dir.file("cut.idx")),
                       doctest::Contains("cut.idx: byte 29: the file ends after 13 bytes of "
                                         "values, but 20 are needed"),
                       InputError);
  // The same, gzip-compressed: the offset is in the uncompressed data.
  {
    gzFile gz = gzopen(dir.file("cut.idx.gz").c_str(), "wb");
    const std::string body = header + std::string(13, '\x07');
    gzwrite(gz, body.data(), unsigned(body.size()));
    gzclose(gz);
  }
  CHECK_THROWS_WITH_AS(read_idx(dir.file("cut.idx.gz")),
                       doctest::Contains("byte 29 of the uncompressed data"), InputError);
  write_bytes(dir.file("text.idx"), "hello world");
  CHECK_THROWS_WITH_AS(read_idx(dir.file("text.idx")), doctest::Contains("byte 0: not an IDX file"),
                       InputError);
  write_bytes(dir.file("float.idx"), std::string("\x00\x00\x0d\x01\x00\x00\x00\x01", 8));
  CHECK_THROWS_WITH_AS(read_idx(dir.file("float.idx")),
                       doctest::Contains("byte 2: element type 13 (float32) is not supported"),
                       InputError);
  // A header that claims billions of values in a tiny file fails without allocating them.
  write_bytes(dir.file("huge.idx"),
              std::string("\x00\x00\x08\x02\x00\x10\x00\x00\x00\x00\x10\x00", 12));
  CHECK_THROWS_WITH_AS(read_idx(dir.file("huge.idx")), doctest::Contains("truncated"), InputError);
  CHECK_THROWS_WITH_AS(read_idx(dir.file("missing.idx")), doctest::Contains("missing.idx"),
                       InputError);
}

TEST_CASE("CSVIter: data and labels, label_column, errors with line and column") {
  TempDir dir;
  write_bytes(dir.file("d.csv"), "1, 2, 3\n4,5,6\n\n7,8,9\n10,11,12\n");
  write_bytes(dir.file("l.csv"), "0\n1\n2\n3\n");
  CSVIter iter(CSVIterParam::from_strings({{"data_csv", dir.file("d.csv")},
                                           {"data_shape", "(3,)"},
                                           {"label_csv", dir.file("l.csv")},
                                           {"batch_size", "3"}},
                                          "test"));
  auto b = iter.next();
  REQUIRE(b);
  CHECK(b->data.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(b->label.to_vector<float>() == std::vector<float>{0, 1, 2});
  b = iter.next();
  REQUIRE(b);
  CHECK(b->pad == 2);
  CHECK(b->data.to_vector<float>() == std::vector<float>{10, 11, 12, 1, 2, 3, 4, 5, 6});
  CHECK_FALSE(iter.next());

  CSVIter column(CSVIterParam::from_strings({{"data_csv", dir.file("d.csv")},
                                             {"data_shape", "(2,)"},
                                             {"label_column", "0"},
                                             {"batch_size", "4"}},
                                            "test"));
  b = column.next();
  CHECK(b->label.to_vector<float>() == std::vector<float>{1, 4, 7, 10});
  CHECK(b->data.to_vector<float>() == std::vector<float>{2, 3, 5, 6, 8, 9, 11, 12});

  write_bytes(dir.file("bad.csv"), "1,2,3\n4,x,6\n");
  CHECK_THROWS_WITH_AS(
      CSVIter(CSVIterParam::from_strings(
          {{"data_csv", dir.file("bad.csv")}, {"data_shape", "(3,)"}, {"batch_size", "1"}}, "t")),
      doctest::Contains("bad.csv:2: column 2: 'x' is not a number"), InputError);
  write_bytes(dir.file("ragged.csv"), "1,2,3\n4,5\n");
  CHECK_THROWS_WITH_AS(
      CSVIter(CSVIterParam::from_strings(
          {{"data_csv", dir.file("ragged.csv")}, {"data_shape", "(3,)"}, {"batch_size", "1"}},
          "t")),
      doctest::Contains("ragged.csv:2: 2 columns, but line 1 has 3"), InputError);
  CHECK_THROWS_WITH_AS(
      CSVIter(CSVIterParam::from_strings(
          {{"data_csv", dir.file("d.csv")}, {"data_shape", "(4,)"}, {"batch_size", "1"}}, "t")),
      doctest::Contains("d.csv:1: 3 columns, but data_shape (4,) needs 4"), InputError);
  // Shapes that hold no values (fuzz_csv: a (0,) data shape read past an empty batch).
  CHECK_THROWS_WITH_AS(CSVIter(CSVIterParam::from_strings({{"data_csv", dir.file("d.csv")},
                                                           {"data_shape", "(0,)"},
                                                           {"label_column", "0"},
                                                           {"batch_size", "1"}},
                                                          "t")),
                       doctest::Contains("data_shape must be a known, non-empty shape"),
                       InputError);
  CHECK_THROWS_WITH_AS(CSVIter(CSVIterParam::from_strings({{"data_csv", dir.file("d.csv")},
                                                           {"data_shape", "(3,)"},
                                                           {"label_shape", "(0,)"},
                                                           {"batch_size", "1"}},
                                                          "t")),
                       doctest::Contains("label_shape (0,) holds no values"), InputError);
}

TEST_CASE("ImageRecordIter without .idx: shards ending exactly on record starts") {
  // 12 records of equal size: with 2, 3, 4, 6 or 12 parts every byte-range
  // boundary is a record start. Each record must be read by exactly one shard.
  TempDir dir;
  write_bmp_rec(dir.file("d.rec"), dir.file("d.idx"), 12, 6, 6);
  {
    recordio::Reader reader(dir.file("d.rec"));
    recordio::Record r;
    std::set<uint64_t> sizes;
    while (reader.next(r)) sizes.insert(r.end - r.offset);
    REQUIRE(sizes.size() == 1);  // the premise: shard ends fall on record starts
  }
  for (int parts : {2, 3, 4, 6, 12}) {
    CAPTURE(parts);
    std::vector<uint64_t> joined;
    for (int part = 0; part < parts; ++part) {
      ImageRecordIter iter(record_param(
          dir.file("d.rec"), "data_shape=(3,6,6) batch_size=1 round_batch=0 num_parts=" +
                                 std::to_string(parts) + " part_index=" + std::to_string(part)));
      auto ids = epoch_ids(iter);
      CHECK(ids.size() == size_t(12 / parts));
      joined.insert(joined.end(), ids.begin(), ids.end());
    }
    std::vector<uint64_t> all(12);
    std::iota(all.begin(), all.end(), uint64_t{0});
    CHECK(joined == all);  // in file order, none twice, none lost
  }
}

TEST_CASE("ImageRecordIter: preprocess_threads gives the number of workers, 0 the budget") {
  TempDir dir;
  write_bmp_rec(dir.file("d.rec"), dir.file("d.idx"), 4, 6, 6);
  for (int n : {1, 2, 3}) {
    CAPTURE(n);
    ImageRecordIter iter(record_param(
        dir.file("d.rec"), "data_shape=(3,6,6) preprocess_threads=" + std::to_string(n)));
    CHECK(iter.threads() == n);
    CHECK(epoch_ids(iter).size() == 4);
  }
  ImageRecordIter budget(
      record_param(dir.file("d.rec"), "data_shape=(3,6,6) preprocess_threads=0"));
  CHECK(budget.threads() >= 1);
}

TEST_CASE("ImageRecordIter: random crop and mirror are drawn anew every epoch, reproducibly") {
  TempDir dir;
  write_bmp_rec(dir.file("d.rec"), dir.file("d.idx"), 8, 14, 14);
  const std::string extra = "rand_crop=1 rand_mirror=1 seed=5 batch_size=4";
  auto epoch_pixels = [](DataIter& iter) {
    std::vector<float> all;
    while (auto b = iter.next()) {
      auto v = b->data.to_vector<float>();
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  for (const std::string& idx : {std::string(), dir.file("d.idx")}) {
    CAPTURE(idx);
    ImageRecordIter a(record_param(dir.file("d.rec"), extra + " path_imgidx=" + idx));
    const auto first = epoch_pixels(a);
    a.reset();
    const auto second = epoch_pixels(a);
    REQUIRE(first.size() == 8 * 3 * 8 * 8);
    CHECK(first != second);  // same images, same order, new crops and mirrors
    // Per image too: most images get a new crop or mirror.
    int changed = 0;
    for (size_t i = 0; i < 8; ++i)
      changed += !std::equal(first.begin() + long(i * 192), first.begin() + long((i + 1) * 192),
                             second.begin() + long(i * 192));
    CHECK(changed >= 4);
    // The same seed repeats the same epochs.
    ImageRecordIter b(record_param(dir.file("d.rec"), extra + " path_imgidx=" + idx));
    CHECK(epoch_pixels(b) == first);
    b.reset();
    CHECK(epoch_pixels(b) == second);
  }
}

TEST_CASE("MNISTIter and CSVIter shuffle anew every epoch") {
  auto check_epochs = [](DataIter& iter, size_t examples) {
    std::vector<std::vector<uint64_t>> epochs;
    for (int e = 0; e < 3; ++e) {
      if (e > 0) iter.reset();
      epochs.push_back(epoch_ids(iter));
      auto sorted = epochs.back();
      std::sort(sorted.begin(), sorted.end());
      std::vector<uint64_t> all(examples);
      std::iota(all.begin(), all.end(), uint64_t{0});
      CHECK(sorted == all);  // every example once per epoch
    }
    CHECK(epochs[0] != epochs[1]);
    CHECK(epochs[1] != epochs[2]);
    CHECK(epochs[0] != epochs[2]);
    return epochs;
  };
  SUBCASE("MNISTIter") {
    MNISTIterParam p =
        MNISTIterParam::from_strings({{"image", kFashion + "t10k-images-idx3-ubyte.gz"},
                                      {"label", kFashion + "t10k-labels-idx1-ubyte.gz"},
                                      {"batch_size", "500"},
                                      {"shuffle", "1"},
                                      {"round_batch", "0"},
                                      {"silent", "1"}},
                                     "test");
    MNISTIter iter(p);
    auto epochs = check_epochs(iter, 10000);
    MNISTIter again(p);  // the same seed: the same sequence of epochs
    CHECK(epoch_ids(again) == epochs[0]);
    again.reset();
    CHECK(epoch_ids(again) == epochs[1]);
  }
  SUBCASE("CSVIter") {
    TempDir dir;
    std::string rows;
    for (int i = 0; i < 30; ++i) rows += std::to_string(i) + "," + std::to_string(2 * i) + "\n";
    write_bytes(dir.file("d.csv"), rows);
    CSVIterParam p = CSVIterParam::from_strings({{"data_csv", dir.file("d.csv")},
                                                 {"data_shape", "(2,)"},
                                                 {"batch_size", "7"},
                                                 {"shuffle", "1"},
                                                 {"round_batch", "0"}},
                                                "test");
    CSVIter iter(p);
    auto epochs = check_epochs(iter, 30);
    // Rows travel with their ids.
    CSVIter again(p);
    auto b = again.next();
    REQUIRE(b);
    auto data = b->data.to_vector<float>();
    for (size_t k = 0; k < b->index.size(); ++k) CHECK(data[2 * k] == float(b->index[k]));
    CHECK(b->index[0] == epochs[0][0]);
  }
}

TEST_CASE("SyntheticIter and epoch order") {
  SyntheticIter iter(SyntheticIterParam::from_strings(
      {{"data_shape", "(3, 4, 4)"}, {"batch_size", "2"}, {"num_batches", "3"}}, "t"));
  int n = 0;
  while (auto b = iter.next()) {
    CHECK(b->data.shape() == Shape{2, 3, 4, 4});
    for (float l : b->label.to_vector<float>()) CHECK((l >= 0 && l < 10 && l == std::floor(l)));
    ++n;
  }
  CHECK(n == 3);
  iter.reset();
  CHECK(iter.next());

  std::set<uint64_t> seen;
  for (int part = 0; part < 4; ++part)
    for (uint64_t i : epoch_order(103, part, 4, true, 5, 2)) CHECK(seen.insert(i).second);
  CHECK(seen.size() == 103);
  CHECK(epoch_order(10, 0, 1, true, 5, 2) == epoch_order(10, 0, 1, true, 5, 2));
  CHECK(epoch_order(10, 0, 1, true, 5, 2) != epoch_order(10, 0, 1, true, 5, 3));
  // A part outside [0, num_parts) is refused, not turned into a wild range.
  CHECK_THROWS(epoch_order(10, -1, 2, false, 5, 2));
  CHECK_THROWS(epoch_order(10, 2, 2, false, 5, 2));
  auto last = batch_slots(10, 2, 4, true);
  CHECK(last.items == std::vector<uint64_t>{8, 9, 0, 1});
  CHECK(last.pad == 2);
  CHECK(batch_slots(10, 2, 4, false).items.size() == 2);
}

TEST_CASE("OrderedPipeline keeps the order and delivers errors where they happened") {
  int next = 0;
  OrderedPipeline<int, int> pipeline(
      [&]() -> std::optional<int> {
        if (next == 200) return std::nullopt;
        return next++;
      },
      [](int&& v, int) {
        std::this_thread::sleep_for(std::chrono::microseconds((v * 7919) % 300));
        if (v == 150) throw InputError("item 150 is bad");
        return v * 2;
      },
      4, 6);
  for (int i = 0; i < 150; ++i) REQUIRE(*pipeline.next() == 2 * i);
  CHECK_THROWS_WITH_AS(pipeline.next(), "item 150 is bad", InputError);
  for (int i = 151; i < 200; ++i) REQUIRE(*pipeline.next() == 2 * i);
  CHECK_FALSE(pipeline.next());

  // Destroyed while work is pending: no hang.
  std::atomic<int> produced{0};
  {
    OrderedPipeline<int, int> abandoned([&]() -> std::optional<int> { return produced++; },
                                        [](int&& v, int) { return v; }, 2, 3);
    abandoned.next();
  }
  CHECK(produced.load() < 10);
}

TEST_CASE("inspecting a .rec: counts, labels, sizes, damage and index problems") {
  InspectOptions options;
  options.idx_path = kDir + "im2rec.idx";
  options.decode = true;
  options.threads = 2;
  auto report = inspect_rec(kDir + "im2rec.rec", options);
  CHECK(report.ok());
  CHECK(report.records == 6);
  CHECK(report.decoded == 6);
  CHECK(report.labels == std::map<float, uint64_t>{{0.0f, 3}, {1.0f, 3}});
  CHECK(report.formats == std::map<std::string, uint64_t>{{"jpeg", 6}});
  CHECK(report.sizes.count({24, 20}) == 1);

  auto magic = inspect_rec(kDir + "magic.rec", {});
  CHECK(magic.records == 15);
  CHECK(magic.split_records == 6);
  CHECK_FALSE(magic.ok());  // not image records
  CHECK(magic.bad_records.size() >= 10);

  TempDir dir;
  std::string bytes = read_bytes(kDir + "im2rec.rec");
  bytes[780] = 'X';                                              // record 2's header
  bytes[1580 + 8 + 24 + 10] ^= 0x55;                             // inside record 3's JPEG
  write_bytes(dir.file("bad.rec"), bytes.substr(0, 4480 + 50));  // cut inside record 6
  options.idx_path = kDir + "im2rec.idx";
  auto bad = inspect_rec(dir.file("bad.rec"), options);
  CHECK_FALSE(bad.ok());
  REQUIRE(bad.damaged.size() == 2);
  CHECK(bad.damaged[0].find("bad.rec: byte 780: expected a record header") != std::string::npos);
  CHECK(bad.damaged[1].find("bad.rec: byte 4480: record length") != std::string::npos);
  CHECK(bad.records == 4);
  CHECK(bad.index_problems.size() == 2);
  std::ostringstream printed;
  print_report(printed, bad);
  CHECK(printed.str().find("PROBLEMS FOUND") != std::string::npos);
}

TEST_CASE("iterators by name from YAML, with file:line errors") {
  const std::string file = "config.yaml";
  YAML::Node ok =
      YAML::Load("type: ImageRecordIter\npath_imgrec: " + kDir +
                 "im2rec_png.rec\ndata_shape: [3, 8, 8]\nbatch_size: 3\nrand_mirror: true\n");
  auto iter = create_data_iter(ok, file);
  CHECK(iter->data_shape() == Shape{3, 3, 8, 8});
  CHECK(epoch_ids(*iter).size() == 6);
  YAML::Node typo = YAML::Load(
      "type: ImageRecordIter\npath_imgrec: x.rec\ndata_shape: [3, 8, 8]\n"
      "batch_size: 3\nmean_rr: 1\n");
  CHECK_THROWS_WITH_AS(create_data_iter(typo, file),
                       doctest::Contains("config.yaml:1:1: data ImageRecordIter: unknown parameter "
                                         "'mean_rr' (did you mean 'mean_r'?)"),
                       InputError);
  YAML::Node unknown = YAML::Load("type: MnistIter\nbatch_size: 3\n");
  CHECK_THROWS_WITH_AS(create_data_iter(unknown, file),
                       doctest::Contains("unknown data iterator 'MnistIter' (did you mean "
                                         "'MNISTIter'?)"),
                       InputError);
  auto synthetic =
      create_data_iter("SyntheticIter", {{"data_shape", "(10,)"}, {"batch_size", "4"}}, "test");
  CHECK(synthetic->label_shape() == Shape{4});
}

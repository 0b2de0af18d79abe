# mx-pack run as a user runs it: real folders, lists, IDX and CSV files, real
# exit codes. Lists and pass-through records must equal what MXNet's im2rec
# wrote for the same folder (tests/fixtures/recordio).
#   cmake -DPROGRAM=... -DFIXTURES=... -DWORK_DIR=... [-DFASHION=dir] -P mx_pack.cmake

include(${CMAKE_CURRENT_LIST_DIR}/mx_pack_checks.cmake)

function(expect_missing path)
  if(EXISTS ${path})
    message(FATAL_ERROR "${path} exists, but nothing should have been written")
  endif()
endfunction()

set(R ${FIXTURES}/recordio)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(W ${WORK_DIR})

# --- Lists: the same bytes as im2rec --list --recursive (shuffled, seed 100).
expect_run(0 "im2rec.lst: 6 images.*classes: 0 cat, 1 dog" "" list ${R}/images ${W}/im2rec)
expect_same_file(${W}/im2rec.lst ${R}/im2rec.lst)
expect_run(0 "" "" list ${R}/images ${W}/im2rec_split --train-ratio 0.5 --test-ratio 0.25)
foreach(part train val test)
  expect_same_file(${W}/im2rec_split_${part}.lst ${R}/im2rec_split_${part}.lst)
endforeach()

# --- An im2rec .lst packed with --pass-through: im2rec's .rec and .idx, byte for byte.
expect_run(0 "pass.rec: 6 records" "" pack ${R}/im2rec.lst ${W}/pass --root ${R}/images
           --pass-through -q)
expect_same_file(${W}/pass.rec ${R}/im2rec_pass.rec)
expect_same_file(${W}/pass.idx ${R}/im2rec_pass.idx)

# --- A class folder with an unreadable image: reported by path and skipped ...
file(COPY ${R}/images DESTINATION ${W})
file(WRITE ${W}/images/cat/broken.jpg "this is not a JPEG")
expect_run(0 "folder_train.rec: [0-9]+ records \\(1 skipped\\).*skipped: .*broken.jpg: cannot decode"
           "mx-pack: skipped .*images/cat/broken.jpg: cannot decode the image \\(18 bytes"
           pack ${W}/images ${W}/folder --train-ratio 0.5 --resize 10 --center-crop
           --encoding png -j 2 -q)
expect_run(0 "folder_train.rec: 2 records.*labels per record: 1 label.*10x10 \\(2\\).*verdict: OK"
           "" inspect ${W}/folder_train.rec)
expect_run(0 "decoded: 4 images.*verdict: OK" "" verify ${W}/folder_val.rec)
# The lists name exactly the packed images.
file(STRINGS ${W}/folder_train.lst train_lines)
list(LENGTH train_lines train_count)
if(NOT train_count EQUAL 2)
  message(FATAL_ERROR "folder_train.lst has ${train_count} lines, expected the 2 packed images")
endif()
# ... or, with --strict, fatal: exit 2 and no output under the final names.
expect_run(2 "" "broken.jpg: cannot decode.*nothing was written" pack ${W}/images ${W}/strict
           --strict -q)
expect_missing(${W}/strict.rec)
expect_missing(${W}/strict.idx)
expect_missing(${W}/strict.lst)
file(GLOB leftovers ${W}/*.tmp.*)
if(leftovers)
  message(FATAL_ERROR "temporary files left behind: ${leftovers}")
endif()

# --- Fashion-MNIST (Debian's .gz IDX files): a 300-image subset, split 80/20.
if(FASHION AND EXISTS ${FASHION}/t10k-images-idx3-ubyte.gz)
  expect_run(0 "fm_val.rec: 60 records.*fm_train.rec: 240 records.*total: 300 records" ""
             pack ${FASHION}/t10k-images-idx3-ubyte.gz ${W}/fm --limit 300 --train-ratio 0.8 -q)
  expect_run(0 "240 records.*10 distinct.*formats: png: 240.*28x28 \\(240\\).*channels: 1: 240.*verdict: OK"
             "" verify ${W}/fm_train.rec)
  # A truncated copy: exit 2, the damaged region named with its byte offset.
  execute_process(COMMAND head -c 40000 ${W}/fm_train.rec OUTPUT_FILE ${W}/cut.rec)
  expect_run(2 "damaged regions: 1.*cut.rec: byte [0-9]+: record length [0-9]+ runs past the end.*index problems"
             "cut.rec: 1 damaged region" inspect ${W}/cut.rec --idx ${W}/fm_train.idx)
  # Record 40's header overwritten: that record is reported with its offset
  # and skipped, the records after it are still found.
  file(STRINGS ${W}/fm_train.idx index_lines)
  list(GET index_lines 40 line40)
  string(REGEX REPLACE "^[0-9]+\t" "" offset40 "${line40}")
  file(COPY_FILE ${W}/fm_train.rec ${W}/hole.rec)
  execute_process(COMMAND sh -c "printf XXXXXXXX | dd of=hole.rec bs=1 seek=${offset40} conv=notrunc 2>/dev/null"
                  WORKING_DIRECTORY ${W})
  expect_run(2 "239 records.*damaged regions: 1.*hole.rec: byte ${offset40}: expected a record header.*resumes at the next record"
             "hole.rec: 1 damaged region" inspect ${W}/hole.rec --no-idx)
else()
  message(STATUS "Fashion-MNIST not found; IDX cases skipped (apt-get install dataset-fashion-mnist)")
endif()

# --- CSV: header line, label column, 4x4 pixels; several labels with --label-width.
file(WRITE ${W}/table.csv "label,p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13,p14,p15,p16\n")
foreach(row RANGE 1 5)
  math(EXPR label "${row} % 3")
  file(APPEND ${W}/table.csv "${label},0,10,20,30,40,50,60,70,80,90,100,110,120,130,140,${row}\n")
endforeach()
expect_run(0 "table.rec: 5 records" "" pack ${W}/table.csv ${W}/table -q)
expect_run(0 "5 records.*histogram \\(3 distinct\\): 0: 1 1: 2 2: 2.*4x4 \\(5\\).*verdict: OK" ""
           verify ${W}/table.rec)
expect_run(0 "table2.rec: 5 records" "" pack ${W}/table.csv ${W}/table2 --label-width 2
           --shape 3,5 -q)
expect_run(0 "2 label\\(s\\): 5.*5x3" "" inspect ${W}/table2.rec)
file(WRITE ${W}/bad.csv "1,0,0,0,0\n2,0,0,300,0\n")
expect_run(2 "" "mx-pack: error: .*bad.csv:2: column 4: 300 is not a pixel value" pack ${W}/bad.csv
           ${W}/bad --strict -q)
file(WRITE ${W}/ragged.csv "1,0,0,0,0\n2,0,0\n")
expect_run(2 "" "ragged.csv:2: 3 columns, but line 1 has 5" pack ${W}/ragged.csv ${W}/ragged -q)

# --- Bad usage and bad input: exit code 2 with one clear line; runtime failures 1.
expect_run(2 "" "" --no-such-option)
expect_run(2 "" "" pack)
expect_run(2 "" "nothing.rec: cannot open" inspect ${W}/nothing.rec)
file(WRITE ${W}/notes.dat "what is this?")
expect_run(2 "" "cannot tell what '.*notes.dat' is" pack ${W}/notes.dat ${W}/x)
expect_run(2 "" "cannot open '.*missing.csv': no such file" pack ${W}/missing.csv ${W}/x)
expect_run(2 "0 records.*table.csv: byte 0: expected a record header" "1 damaged region" inspect
           ${W}/table.csv --no-idx)
expect_run(2 "" "no images with extensions" pack ${W} ${W}/empty --no-recursive -q)
expect_run(2 "" "JPEG quality 500 is outside 1..100" pack ${R}/images ${W}/q --quality 500 -q)
expect_run(1 "" "cannot write '.*no-such-dir/out.rec'" pack ${R}/images ${W}/no-such-dir/out -q)
expect_run(0 "Usage: .*pack.*inspect.*verify" "" --help)

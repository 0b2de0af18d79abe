# Distributed kvstore runs with a real mpirun on this machine (label mpi).
# Each job ends by itself: mpirun's own --timeout, the runner's limit and
# ctest's TIMEOUT, from the innermost out.
find_program(MX_MPIRUN NAMES mpirun)
if(NOT MX_MPIRUN)
  message(STATUS "mx: mpirun not found; the mpi tests are not registered")
  return()
endif()

set(_server $<TARGET_FILE:mx-serve-ps>)
set(_worker $<TARGET_FILE:kv_test_worker>)
set(_mpirun ${MX_MPIRUN} --oversubscribe --timeout 60)
set(_mpi_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)

function(mx_mpi_test name expect match)
  cmake_parse_arguments(ARG "" "" "COMMAND" ${ARGN})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name})
  file(MAKE_DIRECTORY ${dir})
  # Lists travel as "@@"-separated text (ctest would keep a backslash-escaped ";").
  string(REPLACE ";" "@@" command "${ARG_COMMAND}")
  string(REPLACE ";" "@@" match "${match}")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${command}" -DEXPECT=${expect} "-DMATCH=${match}"
                   -DLIMIT=80 -P ${CMAKE_CURRENT_SOURCE_DIR}/kvstore/run_mpi.cmake
           WORKING_DIRECTORY ${dir})
  set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 100 ENVIRONMENT "${_mpi_env}")
endfunction()

# 1 server + 2 workers, dist_sync: exact values after init, a 2-device push,
# SGD rounds on the server; optimizer states saved and loaded by the server.
mx_mpi_test(mpi_kvstore_sync 0 "kv_test_worker sync: ok;rank +host +pid +role;server +0"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} sync
          --states ${CMAKE_CURRENT_BINARY_DIR}/mpi_kvstore_sync)
# The same over TCP (loopback) instead of shared memory.
mx_mpi_test(mpi_kvstore_sync_tcp 0 "kv_test_worker sync: ok"
  COMMAND ${_mpirun} --mca btl tcp,self -np 1 ${_server} : -np 2 ${_worker} sync)
# The same on the synchronous engine (operations complete on the communication thread).
mx_mpi_test(mpi_kvstore_sync_naive_engine 0 "kv_test_worker sync: ok"
  COMMAND ${_mpirun} -x MX_ENGINE=naive -np 1 ${_server} : -np 2 ${_worker} sync)
# 2 servers, keys of 10 elements and more split over both.
mx_mpi_test(mpi_kvstore_split 0 "kv_test_worker sync: ok;2 server"
  COMMAND ${_mpirun} -np 2 ${_server} : -np 2 ${_worker} sync --bound 8)
mx_mpi_test(mpi_kvstore_async 0 "kv_test_worker async: ok;dist_async"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} async --type dist_async)
# 2-bit compression against the reference, with split keys (per-part codes).
mx_mpi_test(mpi_kvstore_compress 0 "kv_test_worker compress: ok"
  COMMAND ${_mpirun} -np 2 ${_server} : -np 2 ${_worker} compress --bound 8)
# Small keys pushed and pulled in one call travel packed and end bit-identical
# to the same keys sent one by one (2 servers, keys of 5000+ elements split).
mx_mpi_test(mpi_kvstore_pack 0 "kv_test_worker pack: ok"
  COMMAND ${_mpirun} -np 2 ${_server} : -np 2 ${_worker} pack --bound 5000)
# The servers sum in worker order whatever the arrival order: 3 workers
# delayed so that the last arrives first, values whose sum depends on the order.
mx_mpi_test(mpi_kvstore_order 0 "kv_test_worker order: ok"
  COMMAND ${_mpirun} -np 2 ${_server} : -np 3 ${_worker} order --bound 500)
# Gradients pushed in bfloat16 and float16: exact sums, rounding, no 2-bit on top.
mx_mpi_test(mpi_kvstore_narrow_bf16 0 "kv_test_worker narrow: ok"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} narrow --gradient-dtype bfloat16)
mx_mpi_test(mpi_kvstore_narrow_fp16 0 "kv_test_worker narrow: ok"
  COMMAND ${_mpirun} -np 2 ${_server} : -np 2 ${_worker} narrow --gradient-dtype float16 --bound 8)
# Faults: a worker killed, a worker or a server stopped (SIGSTOP): the job ends, non-zero.
# Either the server names the dead worker or mpirun does, whichever is first.
mx_mpi_test(mpi_kvstore_kill nonzero "rank 2 \\(host [^,]+, worker 1\\) has died|process rank 2 .*signal 9"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} kill --timeout 4)
mx_mpi_test(mpi_kvstore_stop nonzero "heartbeats every 0.5 s, a peer silent for 3 s is lost;rank 2 \\(host [^,]+, worker 1\\) has not been heard from"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} stop --timeout 3 --interval 0.5)
mx_mpi_test(mpi_kvstore_stop_server nonzero "rank 0 \\(host [^,]+, server 0\\) has not been heard from"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} stop-server --timeout 3 --interval 0.5)
# A message no mx worker sends ends the job at the server, naming the sender.
mx_mpi_test(mpi_kvstore_rogue_empty_pack nonzero
  "kvstore server: packed message 7 from rank 1 \\(host [^,]+, worker 0\\) came without its payload"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} rogue-empty-pack)
mx_mpi_test(mpi_kvstore_rogue_big_pack nonzero
  "kvstore: packed message 7 of 16777288 bytes is over the limit of 16777280 \\(from rank 1 \\(host [^,]+, worker 0\\)\\)"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} rogue-big-pack)
mx_mpi_test(mpi_kvstore_rogue_packed_bye nonzero
  "kvstore server 0 \\(rank 0\\): a packed bye request from worker 0 \\(only init, push and pull travel packed\\)"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} rogue-packed-bye)
# An error that escapes a worker with its store unfinished ends the job.
mx_mpi_test(mpi_kvstore_throw nonzero
  "kvstore: worker 1 stopped on an error before finishing; ending the job"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} throw)
# A worker's fatal error ends the job with its exit status: 2 for bad input, 1 otherwise.
mx_mpi_test(mpi_kvstore_fail_input 2 "error: worker 1: worker 1's bad input"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} fail-input)
mx_mpi_test(mpi_kvstore_fail_other 1 "error: worker 1: worker 1's other error"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} fail-other)
# A program that initialized MPI without thread support cannot hold a store.
mx_mpi_test(mpi_kvstore_mpi_single nonzero
  "kvstore: MPI was initialized without MPI_THREAD_SERIALIZED support, which the communication thread needs"
  COMMAND ${_mpirun} -np 1 ${_worker} mpi-single)
# MPI's own error reports, injected into worker 1 (rank 2) by a shim around
# MPI_Testsome (mpi_fault_shim.cc): an error of the call as a whole, and of
# one transfer, each end the job naming the rank and the transfer's peer;
# error fields MPI leaves unset after a successful call are ignored.
set(_faulty env LD_PRELOAD=$<TARGET_FILE:mpi_fault_shim>)
mx_mpi_test(mpi_kvstore_mpi_error_call nonzero
  "kvstore: MPI transfer failed at rank 2 \\(host [^,]+, worker 1\\): MPI_ERR_OTHER"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 1 ${_worker} sync
          : -np 1 ${_faulty} MX_TEST_MPI_FAULT=call:3 ${_worker} sync)
mx_mpi_test(mpi_kvstore_mpi_error_status nonzero
  "kvstore: MPI transfer with rank 0 \\(host [^,]+, server 0\\) failed at rank 2 \\(host [^,]+, worker 1\\): MPI_ERR_TRUNCATE"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 1 ${_worker} sync
          : -np 1 ${_faulty} MX_TEST_MPI_FAULT=status:3 ${_worker} sync)
mx_mpi_test(mpi_kvstore_mpi_status_unset 0 "kv_test_worker sync: ok"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 1 ${_worker} sync
          : -np 1 ${_faulty} MX_TEST_MPI_FAULT=garbage ${_worker} sync)
# Start-up problems end every rank with one message and exit status 2.
mx_mpi_test(mpi_kvstore_no_workers 2 "without workers"
  COMMAND ${_mpirun} -np 2 ${_server})
mx_mpi_test(mpi_kvstore_no_servers 2 "needs servers"
  COMMAND ${_mpirun} -np 2 ${_worker} sync)
mx_mpi_test(mpi_kvstore_config_differs 2 "configs differ"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 ${_worker} sync --hash-by-rank)

# mx-train with mx-serve-ps (tests/kvstore/dist_train.cmake has the scenarios).
function(mx_dist_train_test scenario)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/mpi_train_${scenario})
  file(MAKE_DIRECTORY ${dir})
  add_test(NAME mpi_train_${scenario}
           COMMAND ${CMAKE_COMMAND} -DSCENARIO=${scenario} -DMPIRUN=${MX_MPIRUN}
                   -DSERVER=${_server} -DTRAIN=$<TARGET_FILE:mx-train>
                   -DCLOSE=$<TARGET_FILE:params_close>
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/kvstore/dist_train.cmake
           WORKING_DIRECTORY ${dir})
  set_tests_properties(mpi_train_${scenario} PROPERTIES LABELS mpi TIMEOUT 150
                       ENVIRONMENT "${_mpi_env}")
endfunction()
# 1 server + 2 workers (dist_sync) equal one process with the global batch;
# so do 2 devices in one process and 2 workers with 2 devices each.
mx_dist_train_test(equal)
# BatchNorm's moving statistics are averaged over the workers.
mx_dist_train_test(batchnorm)
# Shards of 6 and 7 batches: both workers train 6, nobody waits.
mx_dist_train_test(unequal)
# A distributed run resumed from its checkpoint equals the uninterrupted one;
# pruning removes the servers' states with their checkpoint.
mx_dist_train_test(resume)
# SIGTERM to one worker, and Ctrl-C to mpirun: all workers stop after the
# same batch with a checkpoint (servers' states included) that resumes exactly.
mx_dist_train_test(interrupt)
# 2-bit gradient compression through mx-train trains the problem.
mx_dist_train_test(compress)
# Gradients pushed in bfloat16 and float16 train it as float32 does.
mx_dist_train_test(narrow)
# The 1 + 2 job over TCP (loopback) ends as over shared memory.
mx_dist_train_test(tcp)
# Small keys pushed together (packed) or alone: the same parameters, byte for byte.
mx_dist_train_test(pack)
# A worker killed mid-epoch ends the job, non-zero, naming the rank.
mx_dist_train_test(kill)
# dist_async reaches dist_sync's accuracy within 1%.
mx_dist_train_test(async)
# No servers, workers with different configs (exit 2), a worker's bad data file.
mx_dist_train_test(errors)

# The C API's dist stores: 1 server + 2 workers written in C against libmx.so.
mx_mpi_test(mpi_c_api_kvstore 0 "c_api_dist_worker 0: ok;c_api_dist_worker 1: ok"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 $<TARGET_FILE:c_api_dist_worker> dist_sync)
mx_mpi_test(mpi_c_api_kvstore_async 0 "c_api_dist_worker 0: ok;c_api_dist_worker 1: ok"
  COMMAND ${_mpirun} -np 1 ${_server} : -np 2 $<TARGET_FILE:c_api_dist_worker> dist_async)

# Jobs across hosts made of network namespaces (tests/kvstore/multihost.sh,
# with netns_hosts.sh and mpirun's launcher netns_agent.sh): equal results to
# one host, and faults that end the job within 30 s leaving nothing behind.
# They need root for the namespaces and skip (exit 77, "SKIPPED: ...")
# without it. Each makes namespaces of its own; the lock keeps the
# timing-sensitive fault tests from running beside each other.
function(mx_multihost_test scenario)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/mpi_hosts_${scenario})
  file(MAKE_DIRECTORY ${dir})
  add_test(NAME mpi_hosts_${scenario}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/kvstore/multihost.sh ${scenario} ${_server}
                   $<TARGET_FILE:mx-train> $<TARGET_FILE:params_close>
           WORKING_DIRECTORY ${dir})
  set_tests_properties(mpi_hosts_${scenario} PROPERTIES LABELS mpi TIMEOUT 120
                       SKIP_RETURN_CODE 77 RESOURCE_LOCK mx_netns_hosts
                       ENVIRONMENT "${_mpi_env};MPIRUN=${MX_MPIRUN}")
endfunction()
# dist_sync on 2 hosts (server on host 2, workers on both): the one-host
# job's parameters byte for byte and the same metrics.
mx_multihost_test(sync)
# dist_async on 2 hosts trains the problem.
mx_multihost_test(async)
# 2 servers (keys split over both) and 3 workers on 3 hosts: as on one host.
mx_multihost_test(three)
# Servers on hosts 2 and 3; SIGTERM to the worker on host 2, then --resume
# across the hosts: the uninterrupted one-host job's parameters.
mx_multihost_test(resume)
# Faults: host 2's link cut (also with hosts that share one host name),
# every process of host 2 killed, the server stopped with SIGSTOP.
mx_multihost_test(cut)
mx_multihost_test(cut-same-name)
mx_multihost_test(kill-host)
mx_multihost_test(stop-server)

// mx-serve-ps: a parameter server of a distributed run. It takes no config of
// its own: it is started in the same mpirun as the workers, which send it
// their optimizer and settings.
//
//   mpirun -np 1 mx-serve-ps : -np 2 mx-train CONFIG kvstore=dist_sync
#include <csignal>
#include <iostream>

#include "kvstore/kv_server.h"
#include "program.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Parameter server for distributed training; start it in the workers' mpirun:\n"
      "  mpirun -np 1 mx-serve-ps : -np 2 mx-train CONFIG kvstore=dist_sync",
      "mx-serve-ps"};
  return mx::run_program(app, argc, argv, [] {
    // The workers decide when the job stops: on Ctrl-C (mpirun passes it on
    // as SIGTERM to every rank), SIGTERM or SIGUSR1 they checkpoint, with
    // the servers' optimizer states, and say goodbye, after which the
    // servers exit. A server that died of the signal would end the job
    // first; mpirun's SIGKILL still ends a job that does not stop in time.
    for (int sig : {SIGINT, SIGTERM, SIGUSR1}) std::signal(sig, SIG_IGN);
    // A start-up problem ends every rank alike (StartupError); rank 0 has
    // printed it.
    mx::kvstore::Server server;
    server.run();
  });
}

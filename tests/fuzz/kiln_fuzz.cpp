// kiln_fuzz: the differential fuzzer as a program.
//   kiln_fuzz [--cases N] [--seed S] [--gpu] [--max-ops K] [--max-elems E] [--no-fft]
//             [--no-patterns] [--no-reference] [--no-shrink] [--verbose] [--print] [--coverage]
// Runs N random programs (seeds S, S+1, ...) on the host lazily and eagerly, and with --gpu
// on the GPU too, and compares them with each other, with the dtype and shape oracle and
// (unless --no-reference) with the scalar reference. Prints each failure (shrunk, as C++) and a
// summary line; exits 1 on any mismatch or crash. --print shows each program instead of checking
// it, and
// --coverage counts what the programs contain. --no-patterns leaves out the layouts of kiln
// issue 11 (generate.hpp), as the fuzzer generated before them.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "fuzz/coverage.hpp"
#include "fuzz/fuzz.hpp"

namespace {

volatile std::sig_atomic_t g_in_case = 0;
volatile uint64_t g_seed = 0;

void write_text(const char* s) {
  ssize_t ignored = write(STDERR_FILENO, s, std::strlen(s));
  (void)ignored;
}

void write_number(uint64_t v) {
  char digits[24];
  int k = 0;
  do digits[k++] = static_cast<char>('0' + v % 10), v /= 10;
  while (v && k < 24);
  char text[25];
  for (int i = 0; i < k; ++i) text[i] = digits[k - 1 - i];
  text[k] = 0;
  write_text(text);
}

// A crash that kills the process still names its case (async-signal-safe: write(2) only).
void on_fatal_signal(int sig) {
  if (g_in_case) {
    write_text("\nkiln_fuzz: fatal signal in the case with seed ");
    write_number(g_seed);
    write_text("; kiln_fuzz --print --seed ");
    write_number(g_seed);
    write_text(" --cases 1 shows its program\n");
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

[[noreturn]] void usage(const char* why) {
  std::cerr << "kiln_fuzz: " << why
            << "\nusage: kiln_fuzz [--cases N] [--seed S] [--gpu] [--max-ops K] [--max-elems E]"
               " [--no-fft] [--no-patterns] [--no-reference] [--no-shrink] [--verbose] [--print] "
               "[--coverage]\n";
  std::exit(2);
}

uint64_t number(int& i, int argc, char** argv) {
  if (i + 1 >= argc) usage((std::string(argv[i]) + " needs a number").c_str());
  char* end = nullptr;
  unsigned long long v = std::strtoull(argv[++i], &end, 10);
  if (!end || *end) usage((std::string("not a number: ") + argv[i]).c_str());
  return v;
}

struct Args {
  kiln::fuzz::RunOptions run;
  bool print = false, coverage = false;
};

Args parse(int argc, char** argv) {
  Args a;
  a.run.out = &std::cout;
  a.run.check.reference = true;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--cases")
      a.run.cases = static_cast<int64_t>(number(i, argc, argv));
    else if (s == "--seed")
      a.run.seed = number(i, argc, argv);
    else if (s == "--gpu")
      a.run.check.gpu = true;
    else if (s == "--max-ops")
      a.run.limits.max_ops = static_cast<int>(number(i, argc, argv));
    else if (s == "--max-elems")
      a.run.limits.max_elems = static_cast<int64_t>(number(i, argc, argv));
    else if (s == "--no-fft")
      a.run.limits.fft = false;
    else if (s == "--no-patterns")
      a.run.limits.patterns = 0;
    else if (s == "--no-reference")
      a.run.check.reference = false;
    else if (s == "--no-shrink")
      a.run.shrink = false;
    else if (s == "--verbose")
      a.run.verbose = true;
    else if (s == "--print")
      a.print = true;
    else if (s == "--coverage")
      a.coverage = true;
    else
      usage(("unknown argument " + s).c_str());
  }
  return a;
}

void print_programs(const kiln::fuzz::RunOptions& o) {
  for (int64_t i = 0; i < o.cases; ++i) {
    uint64_t seed = o.seed + static_cast<uint64_t>(i);
    std::cout << "// seed " << seed << "\n" << to_cpp(kiln::fuzz::generate(seed, o.limits)) << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  if (a.print) return print_programs(a.run), 0;
  if (a.coverage) {
    std::cout << kiln::fuzz::coverage_report(a.run.seed, a.run.cases, a.run.limits);
    return 0;
  }
  if (a.run.check.gpu && !kiln::cuda_available()) {
    std::cerr << "kiln_fuzz: --gpu, but no CUDA device is available\n";
    return 1;
  }
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) std::signal(sig, on_fatal_signal);
  a.run.before_case = [](uint64_t seed) {
    g_seed = seed;
    g_in_case = 1;
  };
  kiln::fuzz::RunStats s = kiln::fuzz::run_cases(a.run);
  g_in_case = 0;
  std::cout << kiln::fuzz::summary(s) << std::endl;
  if (!s.failed_seeds.empty()) {
    std::cout << "failed seeds:";
    for (uint64_t seed : s.failed_seeds) std::cout << " " << seed;
    std::cout << std::endl;
  }
  return s.mismatches + s.crashes == 0 ? 0 : 1;
}

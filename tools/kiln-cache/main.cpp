// kiln-cache: inspect and maintain kiln's kernel cache. The command line (through CLI11), help
// and dispatch.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string_view>

#include "cli.hpp"
#include "jit/cache_config.hpp"

namespace kiln_cache {

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"list", "list [--sort hits|size|compile|used]", "the entries as a table",
       "One row per entry: key prefix, kernel name, what it computes, arch, file size, compile\n"
       "time, hits (by every process) and last use. --sort orders by that column, largest or\n"
       "most recent first (default: used). Damaged or untrusted files are counted below the\n"
       "table (with their size, which the total leaves out); `verify` names them. --json\n"
       "lists every entry, bad ones with \"valid\": false.\n",
       run_list},
      {"show", "show KEY", "one entry: metadata, CUDA source, options, SASS",
       "KEY may be any unique prefix of the key (as `list` prints it). Prints the metadata, the\n"
       "CUDA source, the NVRTC options and the SASS (through `cuobjdump -sass` when it is on\n"
       "PATH; otherwise the PTX that NVRTC makes from the entry's source and options).\n"
       "An unknown or ambiguous prefix is an error.\n",
       run_show},
      {"stats", "stats", "entries, bytes, hits, compile time saved",
       "Totals over the directory. \"Saved\" is the compile time the hits avoided: the sum over\n"
       "entries of hits x compile time.\n",
       run_stats},
      {"verify", "verify [--fix]", "check every entry (exit 1 if any is bad)",
       "Reads and checks every entry (magic, format version, size, checksum, key) and names each\n"
       "bad file with the reason. --fix removes them. Exit status 1 while bad entries remain.\n"
       "Files kiln did not write are mentioned but never touched. A directory kiln does not\n"
       "trust (another user can write it or its usage/) is named as bad; --fix refuses it.\n",
       run_verify},
      {"prune", "prune [--max-bytes N] [--older-than DAYS]", "remove least recently used entries",
       "--max-bytes N removes least recently used entries until the rest fit in N bytes (500M,\n"
       "2G, 64KiB are accepted); --older-than DAYS removes entries not used for DAYS days (a\n"
       "fraction is fine). Recency is the last hit from the usage logs, else the file's mtime.\n"
       "At least one of the two is required.\n",
       run_prune},
      {"clear", "clear", "remove every entry",
       "Removes every entry, the usage logs and the saved sources of failed compiles. Files kiln\n"
       "did not write stay.\n",
       run_clear},
  };
  return all;
}

namespace {

constexpr const char* kExitStatus =
    "exit status: 0 success, 1 failure (bad entries, unknown key, missing directory),\n"
    "             2 bad command line\n";

void print_help(const std::string& default_dir) {
  std::cout << "kiln-cache: inspect kiln's kernel cache (works without a GPU)\n\n"
               "usage: kiln-cache [--dir DIR] [--json] COMMAND [OPTIONS]\n\ncommands:\n";
  for (const auto& c : commands()) {
    std::string synopsis = c.synopsis;
    std::cout << "  " << synopsis
              << std::string(synopsis.size() < 44 ? 44 - synopsis.size() : 1, ' ') << c.summary
              << "\n";
  }
  std::cout << "\noptions (before or after the command):\n"
               "  --dir DIR   the cache directory (default: $KILN_CACHE_DIR, else\n"
               "              $XDG_CACHE_HOME/kiln or ~/.cache/kiln; here: "
            << (default_dir.empty() ? "none" : default_dir)
            << ")\n"
               "  --json      machine-readable output on stdout\n"
               "  --help      this text; `kiln-cache COMMAND --help` explains a command\n\n"
            << kExitStatus;
}

void print_command_help(const Command& c) {
  std::cout << "usage: kiln-cache [--dir DIR] [--json] " << c.synopsis << "\n\n"
            << c.help << "\n"
            << kExitStatus;
}

const Command& find_command(const std::string& name) {
  for (const auto& c : commands())
    if (name == c.name) return c;
  std::string names;
  for (const auto& c : commands()) names += std::string(names.empty() ? "" : ", ") + c.name;
  throw UsageError("unknown command '" + name + "' (commands: " + names + ")");
}

struct CommandLine {
  Options options;
  std::string command;                    // "" when none was given
  std::optional<std::string> help_topic;  // `help COMMAND`
  bool help = false;
};

// Global options go anywhere (the commands fall through to them); a command's own options after
// it. kiln-cache prints its own help, and takes the arguments CLI11 does not recognise as extras
// so that its messages name the argument and what was expected.
void define(CLI::App& app, CommandLine& cl) {
  Options& o = cl.options;
  app.set_help_flag();
  app.allow_extras()->fallthrough()->require_subcommand(0, 1);
  app.add_flag("-h,--help", cl.help);
  app.add_flag("--json", o.json);
  app.add_option("--dir", o.dir)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  for (const auto& c : commands()) app.add_subcommand(c.name);
  app.add_subcommand("help")->add_option("COMMAND", cl.help_topic);
  app.get_subcommand("list")->add_option("--sort", o.sort);
  app.get_subcommand("show")->add_option("KEY", o.key);
  app.get_subcommand("verify")->add_flag("--fix", o.fix);
  CLI::App* prune = app.get_subcommand("prune");
  prune->add_option("--max-bytes", o.max_bytes);
  prune->add_option("--older-than", o.older_than);
}

UsageError missing_value(const std::string& option) {
  return UsageError(option == "--dir" ? "--dir needs a directory" : option + " needs a value");
}

// CLI11 reports a missing value as "--older-than: 1 required TEXT missing".
[[noreturn]] void throw_usage(const CLI::ParseError& e) {
  std::string what = e.what();
  for (std::string option : {"--dir", "--sort", "--max-bytes", "--older-than"})
    if (what.starts_with(option + ":")) throw missing_value(option);
  throw UsageError(what);
}

// An option no command takes, or (the likely mistake) one given before or to the wrong command.
std::string unknown_option(const CLI::App& app, const std::string& arg) {
  std::string name = arg.substr(0, arg.find('='));
  for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; }))
    if (c->get_option_no_throw(name))
      return "unknown option " + arg + " (" + name + " is an option of `" + c->get_name() +
             "`, after the command)";
  return "unknown option " + arg;
}

// What CLI11 left over: unknown options, an unknown command, or one argument too many.
void reject_extras(const CLI::App& app, const std::string& command) {
  for (const auto& a : app.remaining(true)) {
    if (a.size() > 1 && a[0] == '-') throw UsageError(unknown_option(app, a));
    if (command.empty()) find_command(a);  // throws: not a command
    throw UsageError("unexpected argument '" + a + "'");
  }
}

// CLI11 reads `--dir= stats` as --dir stats; an empty value after '=' is an error instead.
void reject_empty_values(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--") && a.ends_with("="))
      throw missing_value(std::string(a.substr(0, a.size() - 1)));
  }
}

CommandLine parse(int argc, char** argv) {
  reject_empty_values(argc, argv);
  CommandLine cl;
  CLI::App app;
  define(app, cl);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw_usage(e);
  }
  auto chosen = app.get_subcommands();
  if (!chosen.empty()) cl.command = chosen[0]->get_name();
  reject_extras(app, cl.command);
  if (app.count("--dir") == 0)
    cl.options.dir = kiln::jit::cache_config_from_env().dir;
  else if (cl.options.dir.empty())
    throw missing_value("--dir");
  return cl;
}

int run(int argc, char** argv) {
  CommandLine cl = parse(argc, argv);
  if (cl.command == "help") {
    if (!cl.help_topic) return print_help(cl.options.dir), 0;
    return print_command_help(find_command(*cl.help_topic)), 0;
  }
  if (cl.command.empty()) {
    if (cl.help) return print_help(cl.options.dir), 0;
    throw UsageError("no command given");
  }
  const Command& c = find_command(cl.command);
  if (cl.help) return print_command_help(c), 0;
  if (cl.options.dir.empty())
    throw Failure("no cache directory: HOME is unset and KILN_CACHE_DIR is not set; pass --dir");
  return c.run(cl.options);
}

}  // namespace
}  // namespace kiln_cache

namespace {

// With --json, a failure is a document too ({"error": ..., "exit_status": ...}), so a script
// reading stdout gets JSON either way; the message also goes to stderr, as without --json.
int fail(int argc, char** argv, const std::string& message, int status) {
  using namespace kiln_cache;
  const bool json = std::any_of(argv + 1, argv + argc,
                                [](const char* a) { return std::string_view(a) == "--json"; });
  if (json && !json_written()) write_json({{"error", message}, {"exit_status", status}});
  std::cout.flush();
  std::cerr << "kiln-cache: " << (status == 2 ? "" : "error: ") << message
            << (status == 2 ? "\nrun 'kiln-cache --help' for usage" : "") << "\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return kiln_cache::run(argc, argv);
  } catch (const kiln_cache::UsageError& e) {
    return fail(argc, argv, e.what(), 2);
  } catch (const std::exception& e) {  // Failure, and anything unexpected (bad_alloc, ...)
    return fail(argc, argv, e.what(), 1);
  }
}

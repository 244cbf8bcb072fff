// Draws how kiln fuses an expression: the plan as Graphviz DOT (kiln::to_dot), rendered to SVG
// when Graphviz's `dot` is installed (Debian: apt-get install graphviz).
//   fusion_graph [OUT_PREFIX]   writes OUT_PREFIX.dot (default: fusion) and OUT_PREFIX.svg
#include <kiln/kiln.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  std::string prefix = argc > 1 ? argv[1] : "fusion";
  auto x = kiln::arange(0, 4096, 1, kiln::DType::Float32).reshape({64, 64}).eval();
  auto y = kiln::full({64}, 0.5f, kiln::DType::Float32).eval();
  // The chain of PERFORMANCE.md, and a row normalisation that needs two reductions.
  auto t = kiln::sin(x * 2 + 1) * kiln::cos(y);
  auto chain = kiln::exp(-(t * t + y / 3)) - x;
  auto norm = (x - kiln::mean(x, {1}, true)) / kiln::max(kiln::abs(x));
  std::cout << kiln::explain({chain, norm});
  std::ofstream(prefix + ".dot") << kiln::to_dot({chain, norm});
  std::cout << "wrote " << prefix << ".dot\n";
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    std::cout << "Graphviz's dot is not installed: render with `dot -Tsvg " << prefix << ".dot -o "
              << prefix << ".svg`\n";
    return 0;
  }
  std::string cmd = "dot -Tsvg " + prefix + ".dot -o " + prefix + ".svg";
  if (std::system(cmd.c_str()) != 0) {
    std::cerr << "dot failed: " << cmd << "\n";
    return 1;
  }
  std::cout << "wrote " << prefix << ".svg\n";
  return 0;
}

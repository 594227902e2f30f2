// Loads a model through the library and prints greedy ids: proves that the headers, library and
// CMake package work on their own, installed (find_package) or built in (add_subdirectory).
#include <cstdio>
#include <glassbox/generate.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const glassbox::Model model = glassbox::Model::load(argv[1]);
  glassbox::GenerateOptions options;
  options.max_tokens = 4;
  options.sampling.temperature = 0;
  const std::vector<std::int32_t> prompt = {1, 2, 3};
  glassbox::generate(model, prompt, options, [](const glassbox::GeneratedToken& t) {
    std::printf("%d\n", t.id);
    return true;
  });
  return 0;
}

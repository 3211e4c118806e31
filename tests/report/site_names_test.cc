// Sites in text lists: the innermost frame, with callers only where two rows
// would otherwise read the same.
#include <gtest/gtest.h>

#include "report/site_names.h"
#include "report/thread_sections.h"

namespace edgemem {
namespace {

TEST(SiteNames, EachRowGetsTheFewestFramesThatTellItApart) {
  std::vector<std::string_view> sites{"main;run;load (a.cc:3);operator new", "main;run;step (a.cc:9);operator new",
                                      "main;parse (b.cc:1)", "x;parse (b.cc:1)", "parse (b.cc:1)", "solo"};
  std::vector<std::string_view> names = distinct_tails(sites);
  ASSERT_EQ(names.size(), sites.size());
  EXPECT_EQ(names[0], "load (a.cc:3);operator new");
  EXPECT_EQ(names[1], "step (a.cc:9);operator new");
  EXPECT_EQ(names[2], "main;parse (b.cc:1)");
  EXPECT_EQ(names[3], "x;parse (b.cc:1)");
  EXPECT_EQ(names[4], "parse (b.cc:1)") << "a site that is another's tail is shown whole";
  EXPECT_EQ(names[5], "solo");
}

// Demangled names as libdw gives them for edgemem's own recording
// (`edgemem record -- edgemem analyze`): the function, not its types.
TEST(SiteNames, AFrameReadsAsItsFunctionAndLocation) {
  EXPECT_EQ(readable_frame("edgemem::DwarfCuIndex::line(unsigned long, char const*&, int&)"), "edgemem::DwarfCuIndex::line");
  EXPECT_EQ(readable_frame("CLI::Option* CLI::App::add_option<std::__cxx11::basic_string<char, std::char_traits<char>, "
                           "std::allocator<char> >, std::__cxx11::basic_string<char, std::char_traits<char>, "
                           "std::allocator<char> >, (CLI::detail::enabler)0>(std::__cxx11::basic_string<char, "
                           "std::char_traits<char>, std::allocator<char> >) [clone .isra.0]"),
            "CLI::App::add_option");
  EXPECT_EQ(readable_frame("std::_Function_handler<void (), edgemem::cli::add_analyze_command(CLI::App&)::{lambda()#1}>"
                           "::_M_invoke(std::_Any_data const&)"),
            "std::_Function_handler::_M_invoke");
  EXPECT_EQ(readable_frame("CLI::Option::matching_name[abi:cxx11](CLI::Option const&) const"), "CLI::Option::matching_name");
  EXPECT_EQ(readable_frame("edgemem::cli::add_analyze_command(CLI::App&)::{lambda()#1}::operator()() const (cli.cc:12)"),
            "edgemem::cli::add_analyze_command::{lambda#1}::operator() (cli.cc:12)");
  EXPECT_EQ(readable_frame("(anonymous namespace)::preprocess_frame(std::vector<float, std::allocator<float> >&) "
                           "(pipeline.cc:61)"),
            "(anonymous namespace)::preprocess_frame (pipeline.cc:61)");
  EXPECT_EQ(readable_frame("void (anonymous namespace)::run<int>(int)"), "(anonymous namespace)::run");
  EXPECT_EQ(readable_frame("operator new(unsigned long)"), "operator new");
  EXPECT_EQ(readable_frame("load_weights(int) (vec.cc:3)"), "load_weights (vec.cc:3)");
  EXPECT_EQ(readable_frame("operator delete[](void*, unsigned long)"), "operator delete[]");
  EXPECT_EQ(readable_frame("std::basic_ostream<char>& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)"),
            "std::operator<<");
  EXPECT_EQ(readable_frame("Iter::operator->() const"), "Iter::operator->");
  EXPECT_EQ(readable_frame("Napi::InstanceWrap<InferenceSessionWrap>::InstanceMethodCallbackWrapper(napi_env__*,~napi_callback_info__*)"),
            "Napi::InstanceWrap::InstanceMethodCallbackWrapper");
  // Shapes a second reader found read wrongly before: qualifiers after an
  // inner parameter list, spaces inside braces, named operators.
  EXPECT_EQ(readable_frame("Foo::bar() const::{lambda()#1}::operator()() const"), "Foo::bar::{lambda#1}::operator()");
  EXPECT_EQ(readable_frame("Foo::bar() &::{lambda()#1}::operator()() const"), "Foo::bar::{lambda#1}::operator()");
  EXPECT_EQ(readable_frame("Foo::{unnamed type#1}::bar(int)"), "Foo::{unnamed type#1}::bar");
  EXPECT_EQ(readable_frame("foo(int)::{default arg#1}::operator()() const"), "foo::{default arg#1}::operator()");
  EXPECT_EQ(readable_frame("Foo::operator char const*() const"), "Foo::operator char const*");
  EXPECT_EQ(readable_frame("ns::operator\"\" _km(unsigned long long)"), "ns::operator\"\" _km");
  EXPECT_EQ(readable_frame("void (*ns::foo(int))(int)"), "void (*ns::foo(int))(int)") << "a declarator is left whole";
  EXPECT_EQ(readable_frame("int (&ns::get_arr())[10]"), "int (&ns::get_arr())[10]");
  EXPECT_EQ(readable_frame("Foo::operator std::function<void (int)>() const"), "Foo::operator std::function<void (int)>");
  EXPECT_EQ(readable_frame("decltype (({parm#1}.begin)()) std::begin<std::vector<int> >(std::vector<int>&)"), "std::begin");
  // Left as they are: C functions, addresses, module offsets, and a device's
  // or a log's own site text (any text: it is the name the firmware gave).
  for (std::string_view same : {"main (pipeline.cc:145)", "__GI__IO_doallocbuf (genops.c:342)", "libstdc++.so.6+0xd44a2",
                                "0x7fb74643ac5f", "model.c:58", "conv2d_prepare", "broken(unclosed",
                                "</script>model.c:58", "a <b> c", "tensor(conv1)", "Conv2D<int8>", "op(CONV_2D):alloc",
                                "layer_3 (int8)", "My Lib (1).so+0x10"})
    EXPECT_EQ(readable_frame(same), same);
}

TEST(SiteNames, ALongStackShowsItsInnermostFramesThatFit) {
  EXPECT_EQ(shown_site("main (pipeline.cc:145);describe_tensor (pipeline.cc:68)"),
            "main (pipeline.cc:145);describe_tensor (pipeline.cc:68)") << "short stacks are shown whole";
  const std::string site = "main;CLI::App::parse(int, char const* const*);edgemem::cli::run_analyze("
                           "edgemem::cli::AnalyzeArgs const&);edgemem::DwarfCuIndex::line(unsigned long, char const*&, "
                           "int&) (dwarf_cu_index.cc:88);dwfl_module_getsrc;elf_compress;libelf.so.1+0x13990";
  EXPECT_EQ(shown_site(site, 60), "...;dwfl_module_getsrc;elf_compress;libelf.so.1+0x13990");
  EXPECT_EQ(shown_site(site, 110), "...;edgemem::DwarfCuIndex::line (dwarf_cu_index.cc:88);dwfl_module_getsrc;elf_compress;"
                                   "libelf.so.1+0x13990");
  EXPECT_EQ(shown_site(site, 1000), "main;CLI::App::parse;edgemem::cli::run_analyze;edgemem::DwarfCuIndex::line "
                                    "(dwarf_cu_index.cc:88);dwfl_module_getsrc;elf_compress;libelf.so.1+0x13990");
  EXPECT_EQ(shown_site(site, 5), "...;elf_compress;libelf.so.1+0x13990")
      << "at least the innermost frame, and a named one when that is an address";
}

// Two vectors leaked by two functions: the allocator's inlined frames alone
// fill the line, so the program's own frame leads, or both rows would read
// "...;std::__new_allocator::allocate".
TEST(SiteNames, TheProgramsInnermostFrameIsShownWhenOnlyTheRuntimesWouldFit) {
  const std::string below = ";std::vector<float, std::allocator<float> >::vector(unsigned long, std::allocator<float> const&) "
                            "(stl_vector.h:512);std::_Vector_base<float, std::allocator<float> >::_M_allocate(unsigned "
                            "long) (stl_vector.h:378);std::allocator_traits<std::allocator<float> >::allocate("
                            "std::allocator<float>&, unsigned long) (alloc_traits.h:464);std::__new_allocator<float>::"
                            "allocate(unsigned long, void const*) (new_allocator.h:137)";
  const std::string weights = "main (vec.cc:20);load_weights (vec.cc:5)" + below;
  const std::string biases = "main (vec.cc:21);load_biases (vec.cc:9)" + below;
  EXPECT_EQ(shown_site(weights), "...;load_weights (vec.cc:5);...;std::__new_allocator::allocate (new_allocator.h:137)");
  std::vector<std::string> rows = shown_sites({weights, biases});
  EXPECT_EQ(rows[1], "...;load_biases (vec.cc:9);...;std::__new_allocator::allocate (new_allocator.h:137)");
}

// ONNX Runtime's library has no symbols: its offsets alone filled the line
// and the binding frame that says which call made the block was cut.
TEST(SiteNames, TheInnermostNamedFrameLeadsWhenOnlyAddressesWouldFit) {
  const std::string run = "Napi::InstanceWrap<InferenceSessionWrap>::InstanceMethodCallbackWrapper(napi_env__*, "
                          "napi_callback_info__*);InferenceSessionWrap::Run(Napi::CallbackInfo const&);...;"
                          "libonnxruntime.so.1+0x14f294f;libonnxruntime.so.1+0x14f276b;libonnxruntime.so.1+0x14080b9;"
                          "libonnxruntime.so.1+0x1407b94";
  EXPECT_EQ(shown_site(run), "...;InferenceSessionWrap::Run;...;libonnxruntime.so.1+0x14080b9;"
                             "libonnxruntime.so.1+0x1407b94");
  EXPECT_EQ(shown_site("libfoo.so+0x10;0x7fb74643ac5f;libfoo.so+0x20", 20), "...;libfoo.so+0x20")
      << "nothing named: the innermost";
}

TEST(SiteNames, RowsThatWouldReadAlikeAreWidenedUntilTheyDiffer) {
  std::vector<std::string> rows = shown_sites({"a::x(int);common::f(int)", "b::y(int);common::f(long)", "solo"}, 10);
  EXPECT_EQ(rows[0], "a::x;common::f");
  EXPECT_EQ(rows[1], "b::y;common::f");
  EXPECT_EQ(rows[2], "solo");
  // Overloads under one caller read alike at any width: shown as written.
  rows = shown_sites({"main;ns::load(int)", "main;ns::load(float)"}, 10);
  EXPECT_EQ(rows[0], "ns::load(int)");
  EXPECT_EQ(rows[1], "ns::load(float)");
}

TEST(SiteNames, AProgramFunctionNamedLikeAnAllocatorIsTheProgramsFrame) {
  EXPECT_EQ(shown_site("main;setup (s.cc:3);malloc_tensor (t.cc:9);std::__new_allocator<float>::allocate(unsigned long, "
                       "void const*) (new_allocator.h:137);operator new(unsigned long)",
                       70),
            "...;malloc_tensor (t.cc:9);...;operator new");
}

TEST(SiteNames, FramesAreWholeNotCharacterTails) {
  // "xparse" ends with "parse" as text but not as a frame.
  std::vector<std::string_view> names = distinct_tails({"a;parse", "b;xparse"});
  EXPECT_EQ(names[0], "parse");
  EXPECT_EQ(names[1], "xparse");
  EXPECT_EQ(innermost_frame("a;b;c"), "c");
  EXPECT_EQ(innermost_frame("c"), "c");
}

// Two temporaries sites that differ only in a caller were once printed as
// two identical rows.
TEST(SiteNames, TemporarySitesThatShareTheirInnermostFrameReadApart) {
  TemporaryResult r;
  r.count = 30;
  r.allocations = 40;
  r.bytes = 3000;
  r.top = {{"main;decode (d.cc:5);make_buffer (m.cc:2)", 20, 2000, 20},
           {"main;encode (e.cc:7);make_buffer (m.cc:2)", 10, 1000, 20}};
  std::string text = temporaries_text(r);
  EXPECT_NE(text.find("decode (d.cc:5);make_buffer (m.cc:2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("encode (e.cc:7);make_buffer (m.cc:2)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("main;"), std::string::npos) << text;
}

}  // namespace
}  // namespace edgemem

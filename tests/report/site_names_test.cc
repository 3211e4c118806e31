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
  EXPECT_EQ(readable_frame("operator delete[](void*, unsigned long)"), "operator delete[]");
  EXPECT_EQ(readable_frame("std::basic_ostream<char>& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)"),
            "std::operator<<");
  EXPECT_EQ(readable_frame("Iter::operator->() const"), "Iter::operator->");
  EXPECT_EQ(readable_frame("Napi::InstanceWrap<InferenceSessionWrap>::InstanceMethodCallbackWrapper(napi_env__*,~napi_callback_info__*)"),
            "Napi::InstanceWrap::InstanceMethodCallbackWrapper");
  // Left as they are: C functions, addresses, module offsets, device sites.
  for (std::string_view same : {"main (pipeline.cc:145)", "__GI__IO_doallocbuf (genops.c:342)", "libstdc++.so.6+0xd44a2",
                                "0x7fb74643ac5f", "model.c:58", "conv2d_prepare", "broken(unclosed",
                                "</script>model.c:58", "a <b> c"})
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
  EXPECT_EQ(shown_site(site, 5), "...;libelf.so.1+0x13990") << "at least the innermost frame";
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

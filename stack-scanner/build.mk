# stack-scanner: the latency instrumentation pass plugin
# (build/lib/vprof-latency.so, loaded into clang-14 with -fpass-plugin) and
# the scanner's runtime objects (VL_RT_OBJ, PIC), which libvprof.so and
# libvprof.a contain. build/lib/libvprof-latency.a bundles those objects
# alone for the scanner's own tests and benchmark (tests/scanner,
# bench/latency); it is not installed: one runtime, libvprof.
LLVM_CXXFLAGS ?= $(shell $(LLVM_CONFIG) --cxxflags 2>/dev/null)
CLANGXX       ?= clang++-14
VL_PLUGIN     := $(LIB)/vprof-latency.so
VL_LIB        := $(LIB)/libvprof-latency.a
VL_PASS_SRC   := $(wildcard stack-scanner/pass/*.cpp)
VL_PASS_OBJ   := $(patsubst %.cpp,$(OBJ)/latency-plugin/%.o,$(VL_PASS_SRC))
VL_RT_SRC     := $(wildcard stack-scanner/rt/*.c) $(wildcard stack-scanner/rt/*.S)
VL_RT_OBJ     := $(patsubst %,$(OBJ)/%.o,$(basename $(VL_RT_SRC)))
# -fPIC: goes into libvprof.so; -Ilibvprof: hooks.h; -Istack-scanner: the
# public vprof_latency.h. Not instrumented itself (built by $(CC)).
CFLAGS_stack-scanner := -fPIC -pthread -Ilibvprof -Istack-scanner -Istack-scanner/rt

$(OBJ)/latency-plugin/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CLANGXX) $(LLVM_CXXFLAGS) $(WARN) -Wno-unused-parameter $(OPT) -fPIC -MMD -MP -c $< -o $@

# LLVM symbols resolve against the clang process that loads the plugin.
$(VL_PLUGIN): $(VL_PASS_OBJ)
	@mkdir -p $(dir $@)
	$(CLANGXX) -shared -fPIC -o $@ $^

$(VL_LIB): $(VL_RT_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(VL_PLUGIN) $(VL_LIB)
INSTALL_LIB += $(VL_PLUGIN)

.PHONY: stack-scanner
stack-scanner: $(VL_PLUGIN) $(VL_LIB)

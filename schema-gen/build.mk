# schema-gen: the LLVM schema pass plugin (build/lib/vprof-schema.so) and the
# compiler wrappers build/bin/vprof-cc and build/bin/vprof-c++.
#
# The plugin is loaded into clang, which is never built with sanitizers, so
# its C parts (and the format module's sources it needs) are compiled here
# with plain -fPIC flags, also when SAN=1.
LLVM_CXXFLAGS := $(shell $(LLVM_CONFIG) --cxxflags 2>/dev/null)
CLANGXX       ?= clang++-14
SG_PLUGIN     := $(LIB)/vprof-schema.so
SG_PASS_SRC   := $(wildcard schema-gen/pass/*.cpp)
SG_PLUG_CSRC  := schema-gen/schema_table.c schema-gen/section_asm.c \
                 schema-gen/component_filter.c
SG_PASS_OBJ   := $(patsubst %.cpp,$(OBJ)/plugin/%.o,$(SG_PASS_SRC))
SG_PLUG_COBJ  := $(patsubst %.c,$(OBJ)/plugin/%.o,$(SG_PLUG_CSRC))
# The format module as an archive, so that only the members the plugin uses
# (the schema writer) are linked: an unresolved symbol elsewhere in the module
# would otherwise make clang fail to load the plugin.
SG_PLUG_FMT   := $(OBJ)/plugin/libvprof-format-plugin.a
SG_PLUG_FOBJ  := $(patsubst %.c,$(OBJ)/plugin/%.o,$(wildcard libvprof/format/*.c))
SG_PLUG_CFLAGS := $(CSTD) $(WARN) $(OPT) -fPIC -Ilibvprof/format -Ilibvprof/include
SG_CC_SRC     := $(wildcard schema-gen/cc/*.c)

$(OBJ)/plugin/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CLANGXX) $(LLVM_CXXFLAGS) $(WARN) -Wno-unused-parameter $(OPT) -fPIC -Ilibvprof/format -MMD -MP -c $< -o $@

$(OBJ)/plugin/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SG_PLUG_CFLAGS) -MMD -MP -c $< -o $@

# Undefined LLVM symbols resolve against the clang process that loads it;
# --exclude-libs keeps the format module's symbols private to the plugin.
$(SG_PLUG_FMT): $(SG_PLUG_FOBJ)
	rm -f $@ && ar rcs $@ $^

$(SG_PLUGIN): $(SG_PASS_OBJ) $(SG_PLUG_COBJ) $(SG_PLUG_FMT)
	@mkdir -p $(dir $@)
	$(CLANGXX) -shared -fPIC -o $@ $(SG_PASS_OBJ) $(SG_PLUG_COBJ) $(SG_PLUG_FMT) -Wl,--exclude-libs,ALL

$(BIN)/vprof-cc: $(call objs,,$(SG_CC_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_TOOL) -o $@ $^

$(BIN)/vprof-c++: $(BIN)/vprof-cc
	ln -sf vprof-cc $@

ALL_TARGETS += $(SG_PLUGIN) $(BIN)/vprof-cc $(BIN)/vprof-c++
INSTALL_BIN += $(BIN)/vprof-cc $(BIN)/vprof-c++
INSTALL_LIB += $(SG_PLUGIN)
INSTALL_MAN += schema-gen/vprof-cc.1

.PHONY: schema-gen
schema-gen: $(SG_PLUGIN) $(BIN)/vprof-cc $(BIN)/vprof-c++

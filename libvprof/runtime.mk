# libvprof runtime: build/lib/libvprof.so and build/lib/libvprof.a.
# The sampling core (core, vartable, value_read, memread, unwind, stacks) is kept
# apart from the interposition shell (runtime, signals, threads, callgraph,
# mcount.S, config, exeinfo) so that the glibc patch can link the core alone;
# session.c (naming, opening and closing vprof's files) is shared by this
# shell and the glibc patch's glue.
RT_CORE_SRC  := libvprof/core.c libvprof/vartable.c libvprof/value_read.c libvprof/cfi.c \
                libvprof/memread.c libvprof/unwind.c libvprof/stacks.c
RT_SHELL_SRC := libvprof/runtime.c libvprof/session.c libvprof/signals.c libvprof/threads.c \
                libvprof/callgraph.c libvprof/callcount.c libvprof/config.c libvprof/exeinfo.c
RT_ASM_SRC   := libvprof/mcount.S
RT_OBJS      := $(call objs,,$(RT_CORE_SRC) $(RT_SHELL_SRC)) \
                $(patsubst %.S,$(OBJ)/%.o,$(RT_ASM_SRC))
RT_CORE_OBJS := $(call objs,,$(RT_CORE_SRC))
FORMAT_OBJS  := $(call objs,,$(FORMAT_SRC))
RT_LIBS      := -lunwind -lunwind-x86_64 -ldl -lpthread
# The stack scanner's runtime (scanner thread, shims, request API) is part of
# libvprof: it is idle unless VPROF_LATENCY=1 (docs/LATENCY.md).
RT_LAT_OBJS  := $(VL_RT_OBJ)

# The runtime must never be instrumented itself, and must keep its frame
# layout simple for the trampolines.
# Paths that do not fit PATH_MAX fail at open(), so truncation warnings on
# them are noise.
CFLAGS_libvprof += -fno-omit-frame-pointer -Wno-format-truncation
# Link-time optimisation: a tick crosses signals.c, core.c, stacks.c,
# unwind.c, cfi.c and callgraph.c, a dozen calls between files that only the
# link can inline (about 5% of a tick's instructions, bench/RESULTS.md "per
# tick"). Fat objects: the archives (libvprof.a, libvprof-core.a for the
# glibc patch, libvprof-format.a for the tools) still link without LTO.
CFLAGS_libvprof += -flto=auto -ffat-lto-objects
LDFLAGS_RT := $(OPT) $(SANFLAGS) -flto=auto

$(LIB)/libvprof.so: $(RT_OBJS) $(RT_LAT_OBJS) $(FORMAT_OBJS) libvprof/libvprof.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_RT) -Wl,-soname,libvprof.so -Wl,-z,nodelete \
	    -Wl,--version-script=libvprof/libvprof.map -o $@ $(filter %.o,$^) $(RT_LIBS)

$(LIB)/libvprof.a: $(RT_OBJS) $(RT_LAT_OBJS) $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The core alone, for the glibc patch and for tests of the core.
$(LIB)/libvprof-core.a: $(RT_CORE_OBJS) $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

libvprof: $(LIB)/libvprof.so $(LIB)/libvprof.a $(LIB)/libvprof-core.a
.PHONY: libvprof

ALL_TARGETS += $(LIB)/libvprof.so $(LIB)/libvprof.a $(LIB)/libvprof-core.a
INSTALL_LIB += $(LIB)/libvprof.so $(LIB)/libvprof.a
INSTALL_MAN += libvprof/libvprof.3

-include tests/libvprof/build.mk

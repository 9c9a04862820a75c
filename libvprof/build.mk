# libvprof/format: the shared reader/writer module (static, PIC so that it can
# go into libvprof.so too). Its offline/ members (checked allocation that
# exits, the ELF reader that needs libelf) are for the tools only: they are in
# libvprof-format.a, never in the runtime (FORMAT_SRC).
FORMAT_SRC := $(wildcard libvprof/format/*.c)
FORMAT_OFFLINE_SRC := $(wildcard libvprof/format/offline/*.c)
FORMAT_LIB := $(LIB)/libvprof-format.a
CFLAGS_libvprof := -fPIC

$(FORMAT_LIB): $(call objs,,$(FORMAT_SRC) $(FORMAT_OFFLINE_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(FORMAT_LIB)

-include libvprof/runtime.mk

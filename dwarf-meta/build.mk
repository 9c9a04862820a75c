# dwarf-meta: vprof-meta, schema + DWARF -> variable metadata.
META_SRC := $(wildcard dwarf-meta/*.c)
META_BIN := $(BIN)/vprof-meta
CFLAGS_dwarf-meta :=

$(META_BIN): $(call objs,,$(META_SRC)) $(FORMAT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_TOOL) -o $@ $(call objs,,$(META_SRC)) $(FORMAT_LIB) -ldwarf -lelf -lz

.PHONY: vprof-meta
vprof-meta: $(META_BIN)

ALL_TARGETS += $(META_BIN)
INSTALL_BIN += $(META_BIN)
INSTALL_MAN += dwarf-meta/vprof-meta.1

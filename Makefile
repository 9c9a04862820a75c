# vprof top-level build. `make` builds everything into build/; each component
# owns a build.mk fragment that adds its targets to ALL_TARGETS (and, for
# installation, to INSTALL_BIN / INSTALL_LIB / INSTALL_MAN).
include mk/config.mk

ALL_TARGETS :=
INSTALL_BIN :=
INSTALL_LIB :=
INSTALL_MAN :=

.PHONY: all deps test test-quick demo install clean

all: deps build-all

# Installs missing Debian packages (quick no-op when everything is there).
deps:
	@./scripts/install-deps.sh

# stack-scanner first: libvprof.so contains its runtime objects (VL_RT_OBJ).
-include stack-scanner/build.mk
-include libvprof/build.mk
-include dwarf-meta/build.mk
-include schema-gen/build.mk
-include vprof-report/build.mk

build-all: $(ALL_TARGETS)

# vprof-report's ASan/UBSan build too: tests/run runs every test with it.
# Both builds use every core (CI calls plain `make test`: a serial build was
# a seventh of its 15 minutes).
NPROC := $(shell nproc 2>/dev/null || echo 2)
test: deps
	@$(MAKE) -j$(NPROC) build-all
	@$(MAKE) -s -j$(NPROC) SAN=1 BUILD=build/san build/san/bin/vprof-report
	@./tests/run

demo: all
	@$(MAKE) -s -C examples/demo run

install: all
	install -d $(PREFIX)/bin $(PREFIX)/lib $(PREFIX)/include $(PREFIX)/lib/pkgconfig $(PREFIX)/share/man/man1 $(PREFIX)/share/man/man3
	$(if $(INSTALL_BIN),install -m 755 $(INSTALL_BIN) $(PREFIX)/bin/)
	$(if $(INSTALL_LIB),cp -P $(INSTALL_LIB) $(PREFIX)/lib/)
	install -m 644 libvprof/include/vprof.h stack-scanner/vprof_latency.h $(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' libvprof/vprof.pc.in > $(PREFIX)/lib/pkgconfig/vprof.pc
	$(if $(filter %.1,$(INSTALL_MAN)),install -m 644 $(filter %.1,$(INSTALL_MAN)) $(PREFIX)/share/man/man1/)
	$(if $(filter %.3,$(INSTALL_MAN)),install -m 644 $(filter %.3,$(INSTALL_MAN)) $(PREFIX)/share/man/man3/)

clean:
	rm -rf $(BUILD)

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

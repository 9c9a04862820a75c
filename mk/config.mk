# Shared build settings. Every component's build.mk uses these.
BUILD      ?= build
BIN        := $(BUILD)/bin
LIB        := $(BUILD)/lib
OBJ        := $(BUILD)/obj
PREFIX     ?= /usr/local

CC         ?= gcc
ifeq ($(origin CC),default)
CC         := gcc
endif
LLVM_CONFIG ?= llvm-config-14
CLANG      ?= clang-14

WARN       := -Wall -Wextra
CSTD       := -std=c11 -D_GNU_SOURCE
OPT        ?= -O2 -g
# SAN=1 builds the tools with AddressSanitizer and UndefinedBehaviorSanitizer.
ifeq ($(SAN),1)
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
CFLAGS_COMMON := $(CSTD) $(WARN) $(OPT) $(SANFLAGS) -Ilibvprof/format -Ilibvprof/include -Istack-scanner
LDFLAGS_TOOL  := $(SANFLAGS)

# Object files of a component: $(call objs,DIR,SOURCES)
objs = $(patsubst %.c,$(OBJ)/%.o,$(2))

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_$(firstword $(subst /, ,$<))) -MMD -MP -c $< -o $@

$(OBJ)/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_$(firstword $(subst /, ,$<))) -MMD -MP -c $< -o $@

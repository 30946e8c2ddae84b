# Tonearm: two commands on a fresh Debian 12 with a Swift 6 toolchain on PATH.
#   make run    installs what is missing, builds, plays a generated demo track and follows it (tonearm watch)
#   make test   installs what is missing, builds, and runs every test
#   make test-tsan, make test-asan   the same tests built with the thread / address sanitizer
#   make test-trixie   every test in a fresh Debian 13 chroot made from this machine (root)
#   make fuzz   builds tonearmd (release) and runs the hostile-client fuzzer (Tests/Fuzz/fuzz.py)
#   make soak   builds tonearmd (release) and runs DURATION of ordinary use against it (Tests/Soak/soak.py)
#   make install PREFIX=/usr/local DESTDIR=   both programs, units, completions, man pages tonearm(1), tonearmd(1), tonearm-dbus(7)
#   make install-test   make install into a temporary prefix, its files checked, then make uninstall
#   make deb    the Debian package, in .build/deb/;  make deb-test  checks it (installs it when run as root)
#   make bench  builds tonearmd (release) and measures it beside its floors (Benchmarks/bench.py)
# swift from PATH; failing that, where toolchains are usually unpacked
SWIFT ?= $(or $(shell command -v swift 2>/dev/null),$(firstword $(wildcard /opt/swift/usr/bin/swift \
	/usr/share/swift/usr/bin/swift /usr/local/swift/usr/bin/swift $(HOME)/.local/share/swiftly/bin/swift)),swift)
export SWIFT
DEMO_DIR := .build/demo
DEMO := $(DEMO_DIR)/tonearm-demo.ogg

.PHONY: test-trixie all deps build run test test-tsan test-asan demo fuzz soak bench clean release generated install uninstall install-test deb deb-test

all: build

deps:
	@bash packaging/install-build-deps.sh

build: deps
	$(SWIFT) build

# A 30-second tagged tone, made by GStreamer's own encoder (no media is committed).
$(DEMO):
	@mkdir -p $(DEMO_DIR)
	gst-launch-1.0 -q audiotestsrc num-buffers=3000 samplesperbuffer=441 freq=440 volume=0.3 \
	  ! audio/x-raw,rate=44100,channels=2 \
	  ! taginject 'tags="title=(string)\"Tonearm demo\",artist=(string)Tonearm,album=(string)Generated"' \
	  ! vorbisenc ! oggmux ! filesink location=$(DEMO)

demo: deps $(DEMO)

run: build demo
	bash scripts/run-demo.sh $(DEMO)

test: deps
	$(SWIFT) build --build-tests
	bash scripts/test.sh

# The same suites built with a sanitizer, each in its own build directory. The service tests start
# the tonearmd built there, so it is sanitized too. Any report (Tests/Sanitizers/*.supp hold the
# libraries' own) fails the run and is printed; reports land in .build/tsan|asan/sanitizer-reports.
# The whole suite in a fresh Debian 13 (GStreamer 1.26, PipeWire 1.4) from this machine: a chroot
# made with debootstrap, the committed HEAD cloned in, its packages installed there (root;
# scripts/suite-in-chroot.sh says how to run part of it, or keep the chroot for a second try).
test-trixie:
	bash scripts/suite-in-chroot.sh trixie

test-tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	SWIFT_SCRATCH=.build/tsan SWIFT_SANITIZE=thread bash scripts/test.sh

test-asan: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build/asan
	SWIFT_SCRATCH=.build/asan SWIFT_SANITIZE=address bash scripts/test.sh

# The fuzzer: CALLS calls (SEED: random and printed unless given; INFLIGHT outstanding at once) on
# PIPELINE (playbin3 or playbin; tonearmd's default unless given) against TONEARMD. Logs go to .build/fuzz/. Debian's python3 (it has
# python3-jeepney), not whatever python3 comes first on PATH.
CALLS ?= 100000
SEED ?=
INFLIGHT ?= 32
PIPELINE ?=
TONEARMD ?= .build/release/tonearmd
FUZZ_PYTHON ?= /usr/bin/python3

fuzz: deps
	$(SWIFT) build -c release --product tonearmd
	$(SWIFT) build -c release --product tonearm-engine
	$(FUZZ_PYTHON) Tests/Fuzz/fuzz.py --calls $(CALLS) $(if $(SEED),--seed $(SEED)) --inflight $(INFLIGHT) \
	  $(if $(PIPELINE),--pipeline $(PIPELINE)) --tonearmd $(TONEARMD)

# The soak test: DURATION (s/m/h, default 1h) of several ordinary clients at once against one tonearmd
# on PIPELINE; samples tonearmd's memory and fds. Plot (PNG) and samples (JSON) go to .build/soak/.
DURATION ?= 1h

soak: deps
	$(SWIFT) build -c release --product tonearmd
	$(SWIFT) build -c release --product tonearm-engine
	$(FUZZ_PYTHON) Tests/Soak/soak.py --duration $(DURATION) $(if $(SEED),--seed $(SEED)) \
	  $(if $(PIPELINE),--pipeline $(PIPELINE)) --tonearmd $(TONEARMD)

# Installing. The programs are built in release mode with the Swift runtime linked in
# (--static-swift-stdlib), in a build directory of their own, so that they run without a toolchain;
# completions and man pages are made from the built programs' own parsers.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(PREFIX)/bin
DATADIR := $(PREFIX)/share
INSTALL_BUILD := .build/install
INSTALL_BIN := $(INSTALL_BUILD)/release
GENERATED := $(INSTALL_BUILD)/generated
# man pages carry the date of the last commit, so that a rebuild makes the same files
MAN_DATE := $(or $(shell git log -1 --format=%cs 2>/dev/null),$(shell date +%F))
ZSH_COMPLETIONS := $(if $(filter /usr,$(PREFIX)),$(DATADIR)/zsh/vendor-completions,$(DATADIR)/zsh/site-functions)

# How the release programs are linked, for a smaller resident set at rest (issue 30; tonearmd at
# rest, /proc/PID/status: 19.2 -> 15.4 MiB): no dynamic symbol table of our own (the Swift runtime's
# link file exports every symbol; nothing looks them up), and with the toolchain's lld, the 42,000
# relative relocations packed (DT_RELR, glibc 2.36: 8 kB instead of the 1 MB the loader read at every
# start) and the functions tonearmd runs until its first answer placed together
# (packaging/startup-order.txt, made by scripts/startup-order.py: at rest, what is resident of our
# code is what the start touched, mapped in folios of 64 kB).
LLD := $(wildcard $(dir $(realpath $(SWIFT)))ld.lld)
RELEASE_LINK := -Xlinker --no-export-dynamic $(if $(LLD),-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
	-Xlinker "--symbol-ordering-file=$(CURDIR)/packaging/startup-order.txt" -Xlinker --no-warn-symbol-ordering)

release: deps
	@# SwiftPM links again only when an object changed, not when the order did
	@if [ -n "$(LLD)" ] && [ packaging/startup-order.txt -nt $(INSTALL_BIN)/tonearmd ]; then \
	  rm -f $(INSTALL_BIN)/tonearmd $(INSTALL_BIN)/tonearm $(INSTALL_BIN)/tonearm-video $(INSTALL_BIN)/tonearm-engine; fi
	$(SWIFT) build -c release --static-swift-stdlib $(RELEASE_LINK) --scratch-path $(INSTALL_BUILD)

# Completions (bash, zsh, fish) and man pages of both programs; the unit, activation and desktop
# files with the install's own path of tonearmd.
generated: release
	rm -rf $(GENERATED)
	mkdir -p $(GENERATED)
	for program in tonearm tonearmd; do \
	  $(INSTALL_BIN)/$$program --generate-completion-script bash >$(GENERATED)/$$program.bash && \
	  $(INSTALL_BIN)/$$program --generate-completion-script zsh >$(GENERATED)/_$$program && \
	  $(INSTALL_BIN)/$$program --generate-completion-script fish >$(GENERATED)/$$program.fish && \
	  python3 scripts/manpage.py $(INSTALL_BIN)/$$program --date $(MAN_DATE) >$(GENERATED)/$$program.1 || exit 1; \
	done
	@# tonearm-dbus(7) from dbus/surface.json, which MPRISTests hold to the service's interface tables
	python3 scripts/dbus-manpage.py dbus/surface.json --date $(MAN_DATE) >$(GENERATED)/tonearm-dbus.7
	for file in packaging/tonearmd.service dbus/org.mpris.MediaPlayer2.tonearm.service packaging/tonearm.desktop; do \
	  sed 's|/usr/bin/tonearmd|$(BINDIR)/tonearmd|g' $$file >$(GENERATED)/$$(basename $$file).in || exit 1; \
	done

install: generated
	install -Dm755 $(INSTALL_BIN)/tonearm $(DESTDIR)$(BINDIR)/tonearm
	install -Dm755 $(INSTALL_BIN)/tonearmd $(DESTDIR)$(BINDIR)/tonearmd
	# the engine's process and the video window, beside tonearmd, which starts them (ARCHITECTURE.md, "How it runs", "The video window, inside")
	install -Dm755 $(INSTALL_BIN)/tonearm-engine $(DESTDIR)$(BINDIR)/tonearm-engine
	install -Dm755 $(INSTALL_BIN)/tonearm-video $(DESTDIR)$(BINDIR)/tonearm-video
	install -Dm644 $(GENERATED)/tonearmd.service.in $(DESTDIR)$(PREFIX)/lib/systemd/user/tonearmd.service
	install -Dm644 $(GENERATED)/org.mpris.MediaPlayer2.tonearm.service.in \
	  $(DESTDIR)$(DATADIR)/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service
	install -Dm644 $(GENERATED)/tonearm.desktop.in $(DESTDIR)$(DATADIR)/applications/tonearm.desktop
	install -Dm644 packaging/icons/tonearm.svg $(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps/tonearm.svg
	install -Dm644 packaging/icons/tonearm-symbolic.svg $(DESTDIR)$(DATADIR)/icons/hicolor/symbolic/apps/tonearm-symbolic.svg
	install -Dm644 -t $(DESTDIR)$(DATADIR)/dbus-1/interfaces dbus/org.mpris.MediaPlayer2.xml \
	  dbus/org.mpris.MediaPlayer2.Player.xml dbus/org.mpris.MediaPlayer2.TrackList.xml \
	  dbus/org.mpris.MediaPlayer2.Playlists.xml dbus/io.github.tonearm.Player1.xml
	for program in tonearm tonearmd; do \
	  install -Dm644 $(GENERATED)/$$program.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/$$program && \
	  install -Dm644 $(GENERATED)/_$$program $(DESTDIR)$(ZSH_COMPLETIONS)/_$$program && \
	  install -Dm644 $(GENERATED)/$$program.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/$$program.fish && \
	  install -Dm644 $(GENERATED)/$$program.1 $(DESTDIR)$(DATADIR)/man/man1/$$program.1 || exit 1; \
	done
	install -Dm644 $(GENERATED)/tonearm-dbus.7 $(DESTDIR)$(DATADIR)/man/man7/tonearm-dbus.7

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tonearm $(DESTDIR)$(BINDIR)/tonearmd $(DESTDIR)$(BINDIR)/tonearm-video $(DESTDIR)$(BINDIR)/tonearm-engine \
	  $(DESTDIR)$(PREFIX)/lib/systemd/user/tonearmd.service \
	  $(DESTDIR)$(DATADIR)/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service \
	  $(DESTDIR)$(DATADIR)/applications/tonearm.desktop \
	  $(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps/tonearm.svg \
	  $(DESTDIR)$(DATADIR)/icons/hicolor/symbolic/apps/tonearm-symbolic.svg \
	  $(addprefix $(DESTDIR)$(DATADIR)/dbus-1/interfaces/,org.mpris.MediaPlayer2.xml org.mpris.MediaPlayer2.Player.xml \
	    org.mpris.MediaPlayer2.TrackList.xml org.mpris.MediaPlayer2.Playlists.xml io.github.tonearm.Player1.xml) \
	  $(DESTDIR)$(DATADIR)/man/man7/tonearm-dbus.7
	for program in tonearm tonearmd; do \
	  rm -f $(DESTDIR)$(DATADIR)/bash-completion/completions/$$program $(DESTDIR)$(ZSH_COMPLETIONS)/_$$program \
	    $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/$$program.fish $(DESTDIR)$(DATADIR)/man/man1/$$program.1; \
	done

# make install and make uninstall into a temporary PREFIX (Tests/Packaging/install-test.sh): the
# desktop entry, the unit and the activation file name that prefix's tonearmd; nothing is left.
install-test: release
	bash Tests/Packaging/install-test.sh

# The Debian package: make install PREFIX=/usr into a staging root, then dpkg-deb (packaging/build-deb.sh).
deb: release
	bash packaging/build-deb.sh

# Checks the package: its file list from dpkg -x, the programs run from it without a toolchain; as
# root also installs it, starts the service by D-Bus activation with a client call, and removes it.
deb-test: deb
	bash Tests/Packaging/deb-test.sh

# The benchmarks (Benchmarks/README.md): every figure of issue 11 for tonearmd beside its floors in
# the same run (a libdbus echo service and bare playbin, compiled or started by the driver), then
# the queue at 10,000 items and the activation of a 10,000-entry playlist. PEERS=mpv,vlc also runs
# mpv and VLC (installed from Debian when missing), PEERS=mpd,mpv,vlc MPD as well (on the sound
# server only); QUEUE=0 leaves the queue out, PLAYLISTS=0 the playlist, VIDEO=0 the 1080p video (on
# an Xvfb of its own); SOUND=pipewire (the default), pulseaudio or none: the sound server of the
# bench's own that every player also plays into (issue 30; none: the fakesink rows only);
# BENCH_ARGS passes more (--quick, --pairs 5, --only video, --only sound, ...).
# The table goes to the terminal; JSON and a PNG to .build/bench/.
PEERS ?=
QUEUE ?= 1
PLAYLISTS ?= 1
VIDEO ?= 1
SOUND ?= pipewire
BENCH_ARGS ?=

# It measures tonearmd as `make install` and the Debian package ship it: the release build with the
# Swift runtime linked in (`release` below), which starts ~3 ms sooner than `swift build -c release`'s,
# whose eleven Swift libraries the loader maps at every start. BENCH_TONEARMD picks another build.
BENCH_TONEARMD ?= $(INSTALL_BUILD)/release/tonearmd

bench: deps release
	$(FUZZ_PYTHON) Benchmarks/bench.py --tonearmd $(BENCH_TONEARMD) $(if $(PIPELINE),--pipeline $(PIPELINE)) \
	  $(if $(PEERS),--peers $(PEERS)) $(if $(filter 0,$(QUEUE)),--no-queue) $(if $(filter 0,$(PLAYLISTS)),--no-playlists) \
	  $(if $(filter 0,$(VIDEO)),--no-video) --sound $(SOUND) \
	  $(BENCH_ARGS)

clean:
	rm -rf .build

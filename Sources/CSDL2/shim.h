#ifndef TONEARM_CSDL2_SHIM_H
#define TONEARM_CSDL2_SHIM_H
// SDL2 for Swift (tonearm-video only). Each static inline function below exists because Swift
// cannot import what it wraps: a function-like macro, or a union of window-system structs.
#include <SDL.h>
#include <SDL_syswm.h>

// SDL_VERSION is a macro, and SDL_SysWMinfo's `info` a union of every window system's struct:
// the X11 window id of `window`, or 0 when it is not an X11 window.
static inline unsigned long tonearm_sdl_x11_window(SDL_Window *window) {
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(window, &info) || info.subsystem != SDL_SYSWM_X11) return 0;
    return (unsigned long) info.info.x11.window;
}
// SDL_WINDOWPOS_CENTERED is a macro.
static inline int tonearm_sdl_centered(void) { return SDL_WINDOWPOS_CENTERED; }
#endif

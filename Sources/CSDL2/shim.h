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
// The window the video sink draws into: an X11 child of `window`'s own, black, mapped, so that
// it can be larger than the window and centred in it (an X11 child window is clipped by its
// parent: "fill" gravity), which glimagesink's render rectangle cannot (gstglwindow.c refuses
// a negative x or y). Xlib on SDL's own connection (SDL_SysWMinfo's union); 0 without X11.
static inline unsigned long tonearm_sdl_x11_child(SDL_Window *window) {
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(window, &info) || info.subsystem != SDL_SYSWM_X11) return 0;
    int width = 0, height = 0;
    SDL_GetWindowSize(window, &width, &height);
    Display *display = info.info.x11.display;
    Window child = XCreateSimpleWindow(display, info.info.x11.window, 0, 0, width > 0 ? width : 1, height > 0 ? height : 1,
                                       0, 0, BlackPixel(display, DefaultScreen(display)));
    // its exposes come to this program (as SDL_SYSWMEVENTs): the sink is told to draw again, so it
    // needs no event thread of its own (ximagesink's looks for X events 20 times a second)
    XSelectInput(display, child, ExposureMask);
    XMapWindow(display, child);
    XFlush(display);
    return (unsigned long) child;
}
// Moves and sizes the child window `child` of `window` (see tonearm_sdl_x11_child).
static inline void tonearm_sdl_x11_place(SDL_Window *window, unsigned long child, int x, int y, int width, int height) {
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(window, &info) || info.subsystem != SDL_SYSWM_X11) return;
    XMoveResizeWindow(info.info.x11.display, (Window) child, x, y, width > 0 ? width : 1, height > 0 ? height : 1);
    // done when this returns: the sink, on a connection of its own, reads the new size next
    XSync(info.info.x11.display, False);
}
// The window an SDL_SYSWMEVENT's X11 event is the last Expose of (its `count` 0: no more
// follow), or 0 for any other event; SDL_SysWMmsg's `msg` is a union of window systems' events.
static inline unsigned long tonearm_sdl_x11_exposed(const SDL_Event *event) {
    if (event->type != SDL_SYSWMEVENT || event->syswm.msg == NULL || event->syswm.msg->subsystem != SDL_SYSWM_X11) return 0;
    const XEvent *x = &event->syswm.msg->msg.x11.event;
    return x->type == Expose && x->xexpose.count == 0 ? (unsigned long) x->xexpose.window : 0;
}
// SDL_HitTest is a C function pointer: every point of the window drags it (the window manager
// moves it: _NET_WM_MOVERESIZE), or none.
static SDL_HitTestResult tonearm_sdl_drag_anywhere(SDL_Window *window, const SDL_Point *point, void *data) {
    (void) window; (void) point; (void) data;
    return SDL_HITTEST_DRAGGABLE;
}
static inline int tonearm_sdl_set_draggable(SDL_Window *window, int on) {
    return SDL_SetWindowHitTest(window, on ? tonearm_sdl_drag_anywhere : NULL, NULL);
}
// SDL_WINDOWPOS_CENTERED is a macro.
static inline int tonearm_sdl_centered(void) { return SDL_WINDOWPOS_CENTERED; }
#endif

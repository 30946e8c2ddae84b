import ArgumentParser
import TonearmClient

/// `on`, `off` or `toggle` (the default of the window's switches).
enum Toggling: String, ExpressibleByArgument, CaseIterable {
    case on, off, toggle
    var value: Bool? { self == .toggle ? nil : self == .on }
}

struct Fullscreen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the video window fullscreen, or back (MPRIS Fullscreen); status 1 when there is no window.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on, off or toggle.") var state: Toggling = .toggle
    func run() throws { try service.withClient { try $0.setFullscreen(state.value) } }
}

struct Raise: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the video window and give it the focus (MPRIS Raise); status 1 when there is no window.")
    @OptionGroup var service: ServiceOptions
    func run() throws { try service.withClient { try $0.raiseWindow() } }
}

struct PictureInPicture: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pip",
        abstract: "Picture-in-picture: a small video window on top in the screen's corner, or back (kept for the next window).")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on, off or toggle.") var state: Toggling = .toggle
    func run() throws { try service.withClient { try $0.setPictureInPicture(state.value) } }
}

/// How the video fills its window (the extension's `VideoGravity`).
enum GravityName: String, ExpressibleByArgument, CaseIterable {
    case fit, fill, stretch
}

struct Gravity: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "How video fills its window: fit (whole picture, bars), fill (whole window, cropped), stretch (both, aspect ignored).")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "fit, fill or stretch.") var gravity: GravityName
    func run() throws { try service.withClient { try $0.setVideoGravity(gravity.rawValue) } }
}

/// What the person does in the video window (docs/video.md: the window's keys and drops), as its
/// program reports it. The window only reports; the player decides, through the same methods the
/// matching client calls use (MPRIS PlayPause, Seek, Volume and Fullscreen, the extension's
/// Muted and PictureInPicture, OpenUri), so that each rule is written once. The on-screen bar only
/// shows (`ControlsBar.swift`): the arrow keys are the window's only seeks.
public enum WindowInput: Sendable, Equatable, Codable {
    case playPause
    case toggleFullscreen
    /// Esc: out of fullscreen; nothing when the window is not.
    case leaveFullscreen
    /// Seek by this much from the position (negative: back).
    case seek(by: Duration)
    /// Change the volume by this many percentage points (negative: down).
    case changeVolume(byPercent: Int)
    case toggleMute
    case togglePictureInPicture
    /// Files (paths, as the window's toolkit gives them) or URIs dropped at once, in order.
    case drop([String])

    /// How far ← and → seek.
    public static let seekStep: Duration = .seconds(5)
    /// How far ↑ and ↓ move the volume, in percentage points: the step of the desktops' volume keys
    /// (GNOME's and KDE's default), and what `tonearm volume +5%` does.
    public static let volumeStep = 5

    /// The action of a double click of the first button.
    public static let doubleClick = WindowInput.toggleFullscreen

    /// The action of the key SDL names `name` (`SDL_GetKeyName`: the key's symbol in the keyboard's
    /// layout, letters in capitals), pressed without Ctrl, Alt or Super; nil for other keys.
    public init?(key name: String) {
        switch name {
        case "Space": self = .playPause
        case "F": self = .toggleFullscreen
        case "Escape": self = .leaveFullscreen
        case "Left": self = .seek(by: .zero - Self.seekStep)
        case "Right": self = .seek(by: Self.seekStep)
        case "Up": self = .changeVolume(byPercent: Self.volumeStep)
        case "Down": self = .changeVolume(byPercent: -Self.volumeStep)
        case "M": self = .toggleMute
        case "P": self = .togglePictureInPicture
        default: return nil
        }
    }
}

extension PlayerMachine {
    /// What the person did in the window, at `now`: the same rules as the client call that does it.
    mutating func handleWindowInput(_ input: WindowInput, now: ContinuousClock.Instant) {
        switch input {
        case .playPause:
            togglePlayPause()
        case .toggleFullscreen:
            setFullscreen(!video.isFullscreen)
        case .leaveFullscreen:
            if video.isFullscreen { setFullscreen(false) }
        case .seek(let offset):
            // MPRIS Player.Seek: "If the CanSeek property is false, this has no effect" (false while
            // linear playback is on: a key has no one to tell why); before 0 is 0, past the end is
            // the next item, as Seek does
            guard canSeek else { return }
            seekItem(to: position(at: now) + offset, now: now)
        case .changeVolume(let points):
            // in whole percent, so that steps from any volume land on the numbers a person reads
            let percent = (state.volume * 100).rounded() + Double(points)
            setVolume(percent / 100)
        case .toggleMute:
            setMuted(!state.isMuted)
        case .togglePictureInPicture:
            setPictureInPicture(!video.settings.pictureInPicture)
        case .drop(let texts):
            guard !texts.isEmpty else { return }
            // resolving them (a stat, a folder walked) is for whoever queues URIs off this queue
            emit(.openRequested(texts))
        }
    }
}

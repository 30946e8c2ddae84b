import TestSupport

/// `SoundServerTests` on PulseAudio: the server of a desktop that has not moved to PipeWire (and
/// of Debian 12 installed without GNOME), and the one whose Pulse protocol pipewire-pulse copies.
/// What the servers do differently: the sound heard and its controls, the server killed and back,
/// devices plugged and the default moved. Not the two at rest (stopped, and paused until the
/// stream is released): they watch tonearmd's own timers and libpulse's, the same client on
/// either server, and take 19 s; they run on PipeWire.
final class PulseAudioServerTests: SoundServerTests {
    override var kind: SoundServer.Kind { .pulseaudio }

    // declared again: the inherited ones would not run here on Linux
    override func testTheMonitorHearsPlayingAndSilenceWhenPaused() throws { try super.testTheMonitorHearsPlayingAndSilenceWhenPaused() }
    override func testVolumeAndMuteActOnWhatIsHeardWithin300Milliseconds() throws {
        try super.testVolumeAndMuteActOnWhatIsHeardWithin300Milliseconds()
    }
    override func testTheServerKilledMidPlayPausesWithAReasonAndPlayPlaysOnceItIsBack() throws {
        try super.testTheServerKilledMidPlayPausesWithAReasonAndPlayPlaysOnceItIsBack()
    }
    override func testOutputsListTheSinksAndFollowHotPlug() throws { try super.testOutputsListTheSinksAndFollowHotPlug() }
    override func testSettingOutputMovesPlaybackWithoutAGap() throws { try super.testSettingOutputMovesPlaybackWithoutAGap() }
    override func testTheChosenDeviceUnpluggedPlaysOnTheDefaultAndBackWhenItReturnsAndIsRemembered() throws {
        try super.testTheChosenDeviceUnpluggedPlaysOnTheDefaultAndBackWhenItReturnsAndIsRemembered()
    }
    override func testDefaultFollowsTheServersDefaultDevice() throws { try super.testDefaultFollowsTheServersDefaultDevice() }
    override func testTheDesktopsSliderMovesVolumeAndMuteAndOurOwnSettingsAreAnnouncedOnce() throws {
        try checkTheDesktopsSliderMovesVolumeAndMuteAndOurOwnSettingsAreAnnouncedOnce()
    }
    override func testTheDesktopsSliderDuringTheSleepFadeDoesNotFightTheFade() throws {
        try checkTheDesktopsSliderDuringTheSleepFadeDoesNotFightTheFade()
    }
}

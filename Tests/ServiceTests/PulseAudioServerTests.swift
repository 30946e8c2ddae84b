import TestSupport

/// `SoundServerTests` on PulseAudio: the server of a desktop that has not moved to PipeWire (and
/// of Debian 12 installed without GNOME), and the one whose Pulse protocol pipewire-pulse copies.
final class PulseAudioServerTests: SoundServerTests {
    override var kind: SoundServer.Kind { .pulseaudio }

    // declared again: a subclass declaring none is not found by XCTest's discovery on Linux
    override func testTheMonitorHearsPlayingAndSilenceWhenPaused() throws { try super.testTheMonitorHearsPlayingAndSilenceWhenPaused() }
    override func testReplayGainIsHeardButIsNeverTheStreamsVolume() throws { try super.testReplayGainIsHeardButIsNeverTheStreamsVolume() }
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
    override func testStoppedOnARealServerWithItsDevicesWatchedNothingWakes() throws {
        try super.testStoppedOnARealServerWithItsDevicesWatchedNothingWakes()
    }
    override func testPausedAWhileOnARealServerNothingWakesAndPlayPlaysOnFromWhereItWas() throws {
        try super.testPausedAWhileOnARealServerNothingWakesAndPlayPlaysOnFromWhereItWas()
    }
    override func testTheDesktopsSliderMovesVolumeAndMuteAndOurOwnSettingsAreAnnouncedOnce() throws {
        try super.testTheDesktopsSliderMovesVolumeAndMuteAndOurOwnSettingsAreAnnouncedOnce()
    }
    override func testTheDesktopsSliderDuringTheSleepFadeDoesNotFightTheFade() throws {
        try super.testTheDesktopsSliderDuringTheSleepFadeDoesNotFightTheFade()
    }
    override func testAStreamOpenedAtHalfVolumeIsHeardAtItFromItsFirstSample() throws {
        try super.testAStreamOpenedAtHalfVolumeIsHeardAtItFromItsFirstSample()
    }
    override func testAHundredSetsAndSliderMovesAreNeitherUndoneNorMissed() throws {
        try super.testAHundredSetsAndSliderMovesAreNeitherUndoneNorMissed()
    }
}

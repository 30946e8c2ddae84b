/// The stream's volume and mute changed at the sound server by someone else: Tonearm's slider in a
/// desktop's sound settings (GNOME Settings, pavucontrol), which is the stream's own volume since
/// tonearmd plays its levels there. MPRIS clients (GNOME Shell, playerctl) expect `Volume` to
/// follow what is heard, so the player takes them as the user's, as a `Volume` or `Muted` set over
/// D-Bus: announced, saved, and given to every stream of the engine.
extension PlayerMachine {
    /// `fading`: the stream had less than `Volume` (the sleep timer's fade, a crossfade's ramp), so
    /// its volume is not a level the user chose: the fade owns the stream's volume until it ends
    /// and its next step sets it again, so the slider moved then is not taken (the fade is not
    /// fought, nor `Volume` made the fade's product). Mute is taken either way. A volume above 1
    /// (a slider past 100%) is taken as 1 and the stream set back to it.
    mutating func streamLevelsChanged(volume: Double, muted: Bool, fading: Bool) {
        if !fading, volume.isFinite {
            let clamped = min(max(volume, 0), 1)
            if clamped != settings.volume {
                setVolume(clamped)
            } else if clamped != volume {
                command(.setVolume(clamped))
            }
        }
        setMuted(muted)
    }
}

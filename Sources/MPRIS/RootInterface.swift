import DBus

// MARK: org.mpris.MediaPlayer2

extension MPRISService {
    func rootInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.root,
            methods: [
                .typed("Raise") { [logger, player] _ in
                    Self.raise(player, logger: logger)  // VideoProperties.swift
                },
                .typed("Quit") { [weak self] _ in
                    guard let self else { return }
                    // reply first, then go: the caller gets its answer before the name is released
                    self.connection.queue.async { self.onQuit?() }
                },
            ],
            properties: [
                .typed("CanQuit", get: { true }),
                .typed("HasTrackList", get: { true }),
                .typed("Identity", get: { [options] in options.identity }),
                .typed("DesktopEntry", get: { [options] in options.desktopEntry }),
                // empty until the engine knows them, then announced (formatsKnown)
                .typed("SupportedUriSchemes", get: { [unowned self] in options.formatsPending ? [] : options.supportedURISchemes }),
                .typed("SupportedMimeTypes", get: { [unowned self] in options.formatsPending ? [] : options.supportedMIMETypes }),
            ] + Self.rootVideoProperties(player),
            introspectionXML: MPRIS.rootXML)
    }

    /// What the engine tells once it knows what it plays (`formatsKnown`); read only then.
    static let formatProperties = ["SupportedUriSchemes", "SupportedMimeTypes"]
}

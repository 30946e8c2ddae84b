import EngineLink
import GStreamer
import PlayerModel

extension MediaCapabilities {
    /// Asks the GStreamer registry (a walk over its factories: cheap, but not free; keep the value),
    /// as the engine leaves it (`GStreamerEngine.prepareRegistry`, which may wait for `gst_init`).
    public init() {
        GStreamerEngine.prepareRegistry()
        let supportedURISchemes = MediaURI.supportedSchemes.filter { Registry.hasSource(forScheme: $0) }
        let registryTypes = Set(Registry.elementFactories([.decoder, .demuxer]).flatMap(\.sinkMediaTypes))
        let playable = registryTypes.filter(Self.isMediaType)
        var types = playable
        for (alias, requirements) in Self.aliases where requirements.allSatisfy(playable.contains) {
            types.insert(alias)
        }
        let supportedMIMETypes = types.sorted()
        var extensions: Set<String> = []
        for finder in Registry.typeFinders() where finder.mediaTypes.contains(where: playable.contains) {
            extensions.formUnion(finder.extensions.map { $0.lowercased() })
        }
        for (fileExtension, mediaType) in Self.commonExtensions where playable.contains(mediaType) {
            extensions.insert(fileExtension)
        }
        self.init(supportedURISchemes: supportedURISchemes, supportedMIMETypes: supportedMIMETypes,
                  playableExtensions: extensions.subtracting(Self.ambiguousExtensions))
    }
}

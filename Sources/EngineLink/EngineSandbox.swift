/// Whether the engine's process confines itself with its system-call filter (issue 39;
/// docs/sandbox.md): on, unless `TONEARM_SANDBOX=off` is in tonearmd's environment, which reaches
/// the engine's through `SpawnEnvironment.engine` (its `TONEARM_` prefix). Off is for debugging a
/// call the filter refuses; no-new-privileges stays either way.
public enum EngineSandbox: String, Sendable, CaseIterable {
    case on, off

    public static let variable = "TONEARM_SANDBOX"

    /// The setting in `environment`: `on` when the variable is unset or empty; nil when it is
    /// neither `on` nor `off` (tonearmd refuses to start then, as for its other variables).
    public static func parse(_ environment: [String: String]) -> EngineSandbox? {
        guard let text = environment[variable]?.trimmingWhitespace(), !text.isEmpty else { return .on }
        return EngineSandbox(rawValue: text)
    }

    /// What the engine does: off only when asked for by name, so that a value tonearmd would have
    /// refused never leaves an engine unconfined.
    public static func inEngine(_ environment: [String: String]) -> EngineSandbox {
        parse(environment) == .off ? .off : .on
    }
}

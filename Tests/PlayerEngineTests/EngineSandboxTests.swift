import EngineLink
import XCTest

/// The folders the engine's Landlock rules leave writable (docs/sandbox.md, "Writes"), from the
/// engine's own environment. The rules themselves: ServiceTests' SandboxTests, in the live engine.
final class EngineSandboxTests: XCTestCase {
    func testTheCacheTheTemporaryFolderDevAndTheRuntimeFolder() {
        let environment = ["HOME": "/home/ada", "XDG_CACHE_HOME": "/var/cache/ada", "TMPDIR": "/scratch", "XDG_RUNTIME_DIR": "/run/user/1000"]
        XCTAssertEqual(EngineSandbox.writableFolders(environment), ["/var/cache/ada", "/scratch", "/dev", "/run/user/1000"])
    }

    func testWithoutTheVariablesTheDefaults() {
        XCTAssertEqual(EngineSandbox.writableFolders(["HOME": "/home/ada"]), ["/home/ada/.cache", "/tmp", "/dev"])
        // relative values are not taken (the XDG spec asks for absolute ones; GLib's TMPDIR too)
        XCTAssertEqual(EngineSandbox.writableFolders(["HOME": "/home/ada", "XDG_CACHE_HOME": "cache", "TMPDIR": "tmp", "XDG_RUNTIME_DIR": "run"]),
                       ["/home/ada/.cache", "/tmp", "/dev"])
    }

    func testARegistryKeptElsewhereHasItsFolder() {
        XCTAssertEqual(EngineSandbox.writableFolders(["HOME": "/home/ada", "GST_REGISTRY": "/srv/gst/registry.bin"]),
                       ["/home/ada/.cache", "/srv/gst", "/tmp", "/dev"])
        XCTAssertEqual(EngineSandbox.writableFolders(["HOME": "/home/ada", "GST_REGISTRY": "/a/r.bin", "GST_REGISTRY_1_0": "/b/r.bin"]),
                       ["/home/ada/.cache", "/b", "/tmp", "/dev"])
    }
}

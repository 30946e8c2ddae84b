import Foundation
import TestSupport
import XCTest

/// The desktop entry and the icons that `make install` and the Debian package ship
/// (`packaging/tonearm.desktop`, `packaging/icons/`). Installing them is checked by
/// `make install-test` and `make deb-test`; this checks the files themselves with the tools the
/// desktop uses: librsvg (GTK's and GNOME Shell's SVG renderer) and desktop-file-validate.
final class DesktopEntryTests: XCTestCase {
    static let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging")
    static let icon = packaging.appendingPathComponent("icons/tonearm.svg")
    static let symbolicIcon = packaging.appendingPathComponent("icons/tonearm-symbolic.svg")
    static let desktopEntry = packaging.appendingPathComponent("tonearm.desktop")

    /// Python's strict XML parser: what it reports of `svg`, one line per finding, for the checks below.
    func describe(_ svg: URL) throws -> [String] {
        let script = """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            print("root", root.tag, root.get("width"), root.get("height"), root.get("viewBox"))
            for element in root.iter():
                for name in ("fill", "stroke", "style", "opacity"):
                    if element.get(name) is not None:
                        print(name, element.get(name))
            """
        let output = try Tool.run("python3", ["-c", script, svg.path], timeout: 30)
        guard output.status == 0 else { throw TestError("\(svg.lastPathComponent) is not well-formed XML: \(output.stderr)") }
        return output.stdout.split(separator: "\n").map(String.init)
    }

    /// Renders `svg` with rsvg-convert at `size` px and returns the PNG's width and height (IHDR).
    func render(_ svg: URL, size: Int) throws -> (Int, Int) {
        let png = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-icon-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: png) }
        let output = try Tool.run("rsvg-convert", ["-w", "\(size)", "-h", "\(size)", "-o", png.path, svg.path], timeout: 30)
        guard output.status == 0 else { throw TestError("rsvg-convert \(svg.lastPathComponent): \(output.stderr)") }
        let data = try Data(contentsOf: png)
        guard data.count > 24, data.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { throw TestError("rsvg-convert wrote no PNG") }
        let number = { (offset: Int) in data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    func testTheAppIconIsA128PixelSVGThatRenders() throws {
        let findings = try describe(Self.icon)
        XCTAssertEqual(findings.first, "root {http://www.w3.org/2000/svg}svg 128 128 0 0 128 128")
        for size in [128, 64, 32, 16] {
            let (width, height) = try render(Self.icon, size: size)
            XCTAssertEqual([width, height], [size, size])
        }
    }

    /// GNOME's symbolic icons: 16 × 16, one colour (#2e3436, which GTK replaces with the text
    /// colour), fills only: a stroke or an opacity would not be recoloured the same way.
    func testTheSymbolicIconIsOneColourAndFillsOnly() throws {
        let findings = try describe(Self.symbolicIcon)
        XCTAssertEqual(findings.first, "root {http://www.w3.org/2000/svg}svg 16 16 0 0 16 16")
        let paint = findings.dropFirst()
        XCTAssertFalse(paint.isEmpty)
        for line in paint {
            XCTAssertEqual(line, "fill #2e3436", "the symbolic icon paints with #2e3436 fills only")
        }
        XCTAssertEqual(try render(Self.symbolicIcon, size: 16).0, 16)
    }

    /// The entry names our icon by its name (the icon theme finds it in hicolor, where make install
    /// and the package put it), and desktop-file-validate accepts it.
    func testTheDesktopEntryValidatesAndNamesOurIcon() throws {
        let validate = try Tool.run("desktop-file-validate", [Self.desktopEntry.path], timeout: 30)
        XCTAssertEqual(validate.status, 0, validate.stdout + validate.stderr)
        let text = try String(contentsOf: Self.desktopEntry, encoding: .utf8)
        let keys = Dictionary(text.split(separator: "\n").compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }) { first, _ in first }
        XCTAssertEqual(keys["Icon"], "tonearm")
        XCTAssertTrue(FileManager.default.fileExists(atPath: Self.packaging.appendingPathComponent("icons/\(keys["Icon"] ?? "").svg").path))
        XCTAssertEqual(keys["Exec"], "/usr/bin/tonearmd --open %U", "absolute: make install rewrites it to its PREFIX")
        XCTAssertEqual(keys["TryExec"], "/usr/bin/tonearmd")
    }
}

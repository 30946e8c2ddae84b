import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import Playlists
import XCTest

/// Our XML reader against FoundationXML's XMLParser (libxml2), which read XSPF files before: the
/// same events for well-formed documents, and a failure for the ones it refused.
final class XMLReaderTests: XCTestCase {
    func ours(_ text: String) -> [XMLReader.Event]? {
        var reader = XMLReader(text)
        var events: [XMLReader.Event] = []
        do {
            while let event = try reader.next() { events.append(event) }
        } catch {
            return nil
        }
        return reader.openElements.isEmpty ? merged(events) : nil
    }

    func libxml(_ text: String) -> [XMLReader.Event]? {
        let collector = Collector()
        let parser = XMLParser(data: Data(text.utf8))
        parser.shouldResolveExternalEntities = false
        parser.delegate = collector
        guard parser.parse(), collector.depth == 0, !collector.events.isEmpty else { return nil }
        return merged(collector.events)
    }

    /// Adjacent text joined: the two cut text at different places (libxml2 at each reference).
    func merged(_ events: [XMLReader.Event]) -> [XMLReader.Event] {
        var out: [XMLReader.Event] = []
        for event in events {
            if case .text(let more) = event, case .text(let text)? = out.last {
                out[out.count - 1] = .text(text + more)
            } else {
                out.append(event)
            }
        }
        return out
    }

    func testWellFormedDocumentsGiveLibxmlsEvents() {
        let documents = [
            #"<?xml version="1.0" encoding="UTF-8"?><playlist version="1" xmlns="http://xspf.org/ns/0/"><title>Mix</title></playlist>"#,
            "<playlist>\n  <trackList>\n    <track><location>file:///a%20b.flac</location></track>\n  </trackList>\n</playlist>\n",
            "<!-- made by hand --><playlist><title>Tom &amp; Jerry &lt;3 &#233;t&#xE9; &quot;x&quot; &apos;</title></playlist>",
            "<playlist><title><![CDATA[a <b> & c]]></title><empty/><e a='1' b=\"2\"/></playlist>",
            "<!DOCTYPE playlist [ <!ELEMENT playlist ANY> ]><playlist><?pi data?><x:title xmlns:x='u'>T</x:title></playlist>",
            "<playlist>Ünïcödé ★ 日本語</playlist>",
            "<a></a><b></b>", "<a></a>x &", // what follows the root is not read
        ]
        for document in documents {
            XCTAssertNotNil(ours(document), document)
            XCTAssertEqual(ours(document), libxml(document), document)
        }
    }

    func testMalformedDocumentsFailAsWithLibxml() {
        let documents = [
            "<playlist><trackList>", "<playlist></trackList>", "text<a/>", "<a>&nbsp;</a>", "<a>&#0;</a>",
            "<a b=1></a>", "<a b='1></a>", "<a><!-- never closed</a>", "<a><![CDATA[x</a>", "<a", "<a b='1'c='2'/>",
            "<a>&amp</a>", "<1a/>",
        ]
        for document in documents {
            XCTAssertNil(ours(document), document)
            XCTAssertNil(libxml(document), document)
        }
    }

    func testFailuresSayWhichLine() {
        var reader = XMLReader("<playlist>\n<trackList>\n</track>\n")
        XCTAssertThrowsError(try { while try reader.next() != nil {} }()) { error in
            XCTAssertEqual((error as? XMLReader.Failure)?.line, 3)
            XCTAssertEqual((error as? XMLReader.Failure)?.message, "end tag </track> where </trackList> was expected")
        }
    }
}

private final class Collector: NSObject, XMLParserDelegate {
    var events: [XMLReader.Event] = []
    var depth = 0
    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        events.append(.start(name))
        depth += 1
    }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        events.append(.end(name))
        depth -= 1
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) { events.append(.text(string)) }
    func parser(_ parser: XMLParser, foundCDATA block: Data) { events.append(.text(String(decoding: block, as: UTF8.self))) }
}

import FoundationEssentials

/// Natural order for names people number: runs of digits compare by value (`2` before `10`),
/// the rest case-insensitively.
public enum NaturalOrder {
    /// Whether `a` sorts before `b`.
    public static func precedes(_ a: String, _ b: String) -> Bool { compare(a, b) == .orderedAscending }

    /// `names` in natural order. Each name's key (its lowercased scalars) is made once, not at
    /// each of the ~log2(n) comparisons a sort makes of it: 13 for a folder of 10,000 files.
    public static func sorted(_ names: [String]) -> [String] {
        sorted(names, by: { $0 }, tieBreak: { _, _ in false })
    }

    /// `elements` in natural order of their names; two with the same name (file names that are not
    /// UTF-8 and decode alike, each bad byte as U+FFFD) in the order `tieBreak` says.
    public static func sorted<Element>(_ elements: [Element], by name: (Element) -> String,
                                       tieBreak: (Element, Element) -> Bool) -> [Element] {
        elements.map { element in
            let name = name(element)
            return (element: element, name: name, key: Array(name.lowercased().unicodeScalars))
        }
            .sorted { a, b in
                let order = compareNatural(a.key, b.key)
                guard order == .orderedSame else { return order == .orderedAscending }
                let plain = compareScalars(a.name.unicodeScalars, b.name.unicodeScalars)
                return plain == .orderedSame ? tieBreak(a.element, b.element) : plain == .orderedAscending
            }
            .map(\.element)
    }

    /// Walks both strings together (as strnatcmp does): where both have a run of digits, the runs
    /// compare by value; elsewhere characters compare case-insensitively. Names equal that way
    /// fall back to plain order, so the order is total.
    public static func compare(_ a: String, _ b: String) -> ComparisonResult {
        let order = compareNatural(Array(a.lowercased().unicodeScalars), Array(b.lowercased().unicodeScalars))
        return order != .orderedSame ? order : compareScalars(a.unicodeScalars, b.unicodeScalars)
    }

    private static func compareNatural(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar]) -> ComparisonResult {
        var i = 0, j = 0
        while i < x.count && j < y.count {
            if isDigit(x[i]) && isDigit(y[j]) {
                let endX = x[i...].firstIndex { !isDigit($0) } ?? x.count
                let endY = y[j...].firstIndex { !isDigit($0) } ?? y.count
                let order = compareNumbers(x[i..<endX], y[j..<endY])
                if order != .orderedSame { return order }
                i = endX
                j = endY
            } else {
                if x[i] != y[j] { return x[i].value < y[j].value ? .orderedAscending : .orderedDescending }
                i += 1
                j += 1
            }
        }
        let restX = x.count - i, restY = y.count - j
        return restX == restY ? .orderedSame : restX < restY ? .orderedAscending : .orderedDescending
    }

    /// Digit runs of any length by value: without leading zeros, the longer is larger.
    private static func compareNumbers(_ a: ArraySlice<Unicode.Scalar>, _ b: ArraySlice<Unicode.Scalar>) -> ComparisonResult {
        let x = a.drop { $0 == "0" }, y = b.drop { $0 == "0" }
        if x.count != y.count { return x.count < y.count ? .orderedAscending : .orderedDescending }
        return compareScalars(x, y)
    }

    private static func compareScalars<S: Sequence<Unicode.Scalar>>(_ a: S, _ b: S) -> ComparisonResult {
        // by scalar values: String's < depends on normalisation, this on the scalars only
        a.lexicographicallyPrecedes(b) { $0.value < $1.value } ? .orderedAscending
            : b.lexicographicallyPrecedes(a) { $0.value < $1.value } ? .orderedDescending : .orderedSame
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }
}


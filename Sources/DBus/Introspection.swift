import CDBus

/// Builds `Introspect` documents from per-interface XML (files in `dbus/`) or from the tables.
public enum Introspection {
    /// The DOCTYPE line every introspection document starts with.
    public static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    /// The standard interfaces every object answers, as libdbus-based services describe them.
    public static let standardInterfacesXML = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>
        """

    /// The `<interface>` elements of `xml`, verbatim: from the first `<interface` to the end of the last
    /// `</interface>`. A whole `<node>` document (with prolog and DOCTYPE) is accepted. Nil when none.
    public static func interfaceElements(of xml: String) -> String? {
        guard let start = xml.firstRange(of: "<interface"), let end = xml.ranges(of: "</interface>").last,
              start.lowerBound < end.upperBound else { return nil }
        return String(xml[start.lowerBound..<end.upperBound])
    }

    /// The node document for an object with `interfaces` and child nodes `children`.
    public static func document(interfaces: [InterfaceDescription], children: [String]) -> String {
        var xml = doctype + "\n<node>\n" + standardInterfacesXML + "\n"
        for interface in interfaces {
            xml += "  " + (interface.introspectionXML.flatMap(interfaceElements(of:)) ?? generatedXML(for: interface)) + "\n"
        }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    /// Introspection XML generated from a table (used when it carries none). Names are validated
    /// D-Bus names and signatures hold no XML metacharacters, so nothing needs escaping.
    public static func generatedXML(for interface: InterfaceDescription) -> String {
        var xml = "<interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            let ins = args(method.inSignature, method.inNames, direction: "in")
            let outs = args(method.outSignature, method.outNames, direction: "out")
            if ins.isEmpty && outs.isEmpty {
                xml += "    <method name=\"\(method.name)\"/>\n"
            } else {
                xml += "    <method name=\"\(method.name)\">\n" + (ins + outs).map { "      \($0)\n" }.joined() + "    </method>\n"
            }
        }
        for signal in interface.signals {
            let signalArgs = args(signal.signature, signal.argumentNames, direction: nil)
            if signalArgs.isEmpty {
                xml += "    <signal name=\"\(signal.name)\"/>\n"
            } else {
                xml += "    <signal name=\"\(signal.name)\">\n" + signalArgs.map { "      \($0)\n" }.joined() + "    </signal>\n"
            }
        }
        for property in interface.properties {
            let open = "    <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"\(property.access.rawValue)\""
            if property.emitsChanged == .true {
                xml += open + "/>\n"
            } else {
                xml += open + ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"\(property.emitsChanged.rawValue)\"/>\n    </property>\n"
            }
        }
        return xml + "  </interface>"
    }

    private static func args(_ signature: Signature, _ names: [String], direction: String?) -> [String] {
        signature.completeTypes.enumerated().map { index, type in
            let name = index < names.count ? " name=\"\(names[index])\"" : ""
            let dir = direction.map { " direction=\"\($0)\"" } ?? ""
            return "<arg\(name) type=\"\(type)\"\(dir)/>"
        }
    }
}

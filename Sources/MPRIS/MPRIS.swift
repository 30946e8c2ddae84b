let x = PackageResources.org_mpris_MediaPlayer2_xml

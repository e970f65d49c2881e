#version 450
void main() { int x = ; }

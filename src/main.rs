fn main() {
    println!("wavejit");
}
